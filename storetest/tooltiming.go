package storetest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"
)

// The digest's §1 tool timing: a tool result keeps when its call ended and
// how long it ran, zero when not said, through every copy of the row —
// compaction's carried tail, a continuation's copy, export and import.
func testToolTiming_KeptByEveryCopy(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	ended := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	MustCreate(t, s, NewSession{ID: "s"})
	AppendTexts(t, s, "s", "run it")
	h := LockFor(t, s, "s")
	w, _ := s.ActiveWatermark(ctx, "s")
	if _, err := s.AppendMessages(ctx, "s", []NewMessage{
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "shell", Arguments: `{}`}}},
		{Role: RoleTool, ToolCallID: "c1", ToolName: "shell", Content: "ok", ToolEndedAt: ended, ToolDuration: 1500 * time.Millisecond},
		{Role: RoleTool, ToolCallID: "c2", ToolName: "shell", Content: "untimed"},
	}); err != nil {
		t.Fatal(err)
	}
	check := func(where, sessionID string) {
		t.Helper()
		ms, err := s.Messages(ctx, sessionID, MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var timed, untimed int
		for _, m := range ms {
			if m.State != StateActive {
				continue
			}
			switch m.Content {
			case "ok":
				timed++
				if !m.ToolEndedAt.Equal(ended) || m.ToolDuration != 1500*time.Millisecond {
					t.Errorf("%s: timed result ended %v after %v, want %v after 1.5s", where, m.ToolEndedAt, m.ToolDuration, ended)
				}
			case "untimed":
				untimed++
				if !m.ToolEndedAt.IsZero() || m.ToolDuration != 0 {
					t.Errorf("%s: untimed result ended %v after %v, want zero", where, m.ToolEndedAt, m.ToolDuration)
				}
			}
		}
		if timed != 1 || untimed != 1 {
			t.Errorf("%s: %d timed and %d untimed results, want one each", where, timed, untimed)
		}
	}
	check("appended", "s")
	// Compaction carries the rows above the watermark: copies.
	if _, err := s.CompactSession(ctx, "s", Compaction{Holder: h, Watermark: w,
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	check("carried by compaction", "s")
	if _, err := s.PublishCompressionChild(ctx, "s", Continuation{Holder: h, Child: NewSession{ID: "s2"}}); err != nil {
		t.Fatal(err)
	}
	check("copied into a continuation", "s2")
	other := open(t, Options{})
	if _, err := other.Import(ctx, bytes.NewReader(exportAll(t, s)), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	s = other
	check("exported and imported", "s2")
}

// Tool timing on anything but a tool result, or a negative duration, is
// refused with ErrInvalidInput and stores nothing.
func testToolTiming_Refusals(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustCreate(t, s, NewSession{ID: "s"})
	for name, m := range map[string]NewMessage{
		"OnAUserMessage":   {Role: RoleUser, Content: "hi", ToolDuration: time.Second},
		"EndedOnAssistant": {Role: RoleAssistant, Content: "hi", ToolEndedAt: time.Now()},
		"NegativeDuration": {Role: RoleTool, ToolCallID: "c", Content: "x", ToolDuration: -time.Second},
		"EndedBefore1970":  {Role: RoleTool, ToolCallID: "c", Content: "x", ToolEndedAt: time.Unix(-10, 0)},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := s.AppendMessage(t.Context(), "s", m); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("AppendMessage = %v, want ErrInvalidInput", err)
			}
		})
	}
	if ms, err := s.Messages(t.Context(), "s", MessageQuery{}); err != nil || len(ms) != 0 {
		t.Errorf("after the refusals: %d messages, %v; want none", len(ms), err)
	}
}
