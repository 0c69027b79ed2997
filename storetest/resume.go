package storetest

import (
	"errors"
	"fmt"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

func testResolveSessionID(t *testing.T, open Opener) {
	s := open(t, Options{})
	for _, id := range []string{"20261101-a1", "20261101-a2", "20261101-b1", "a", "ab", "会话-1"} {
		newTestSession(t, s, id)
	}
	for i := range 12 {
		newTestSession(t, s, fmt.Sprintf("many-%02d", i))
	}
	tests := []struct {
		in, want   string
		err        error
		candidates []string
		more       bool
	}{
		{in: "20261101-b1", want: "20261101-b1"},
		{in: "20261101-b", want: "20261101-b1"},
		{in: "a", want: "a"}, // an exact id wins over the ids it starts
		{in: "会话", want: "会话-1"},
		{in: "20261101-a", err: ErrInvalidInput, candidates: []string{"20261101-a1", "20261101-a2"}},
		{in: "2026", err: ErrInvalidInput, candidates: []string{"20261101-a1", "20261101-a2", "20261101-b1"}},
		{in: "many-", err: ErrInvalidInput, more: true, candidates: []string{
			"many-00", "many-01", "many-02", "many-03", "many-04", "many-05", "many-06", "many-07", "many-08", "many-09"}},
		{in: "zzz", err: ErrNotFound},
		{in: "", err: ErrInvalidInput},
		{in: "bad\xff", err: ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := s.ResolveSessionID(t.Context(), tt.in)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Fatalf("ResolveSessionID(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
			}
			var amb *AmbiguousIDError
			if errors.As(err, &amb) != (tt.candidates != nil) {
				t.Fatalf("ResolveSessionID(%q) error %v: ambiguous %v, want %v", tt.in, err, amb != nil, tt.candidates != nil)
			}
			if amb != nil {
				if diff := cmp.Diff(tt.candidates, amb.Candidates); diff != "" || amb.More != tt.more {
					t.Errorf("candidates (-want +got):\n%s more %v, want %v", diff, amb.More, tt.more)
				}
			}
		})
	}
}

// summarise continues parent in child with a summary and nothing else.
func summarise(t *testing.T, s *Store, parent, child string) {
	t.Helper()
	h := LockFor(t, s, parent)
	w, err := s.ActiveWatermark(t.Context(), parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishCompressionChild(t.Context(), parent, Continuation{Holder: h, Watermark: w, Child: NewSession{ID: child},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary of " + parent, Summary: true}}}); err != nil {
		t.Fatal(err)
	}
}

func testResume(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()

	newTestSession(t, s, "plain")
	AppendTexts(t, s, "plain", "hello")

	// Compressed at the end of a turn: the child holds only the summary.
	newTestSession(t, s, "quiet-1")
	AppendTexts(t, s, "quiet-1", "a", "b")
	summarise(t, s, "quiet-1", "quiet-2")
	summarise(t, s, "quiet-2", "quiet-3") // and again, before any new turn
	// A note is no turn: the continuation still holds none of its own.
	if _, err := s.AppendMessage(ctx, "quiet-3", NewMessage{Role: RoleNote, Content: "an agent's note"}); err != nil {
		t.Fatal(err)
	}

	// Compressed mid-conversation: rows above the watermark are carried
	// into the child, which so has turns of its own.
	newTestSession(t, s, "busy-1")
	AppendTexts(t, s, "busy-1", "a")
	h := LockFor(t, s, "busy-1")
	w, _ := s.ActiveWatermark(ctx, "busy-1")
	AppendTexts(t, s, "busy-1", "late")
	if _, err := s.PublishCompressionChild(ctx, "busy-1", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "busy-2"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "never-spoke")
	// A root without a turn compressed into a child that holds only the
	// summary: resuming stays on the root (issue 34, item 9).
	newTestSession(t, s, "hollow-1")
	summarise(t, s, "hollow-1", "hollow-2")

	tests := []struct{ in, tip, turns string }{
		{"plain", "plain", "plain"},
		{"quiet-1", "quiet-3", "quiet-1"},
		{"quiet-3", "quiet-3", "quiet-1"},
		{"quiet-2", "quiet-3", "quiet-1"},
		{"busy-1", "busy-2", "busy-2"},
		{"busy-", "", ""}, // ambiguous
		{"never", "never-spoke", "never-spoke"},
		{"hollow-1", "hollow-2", "hollow-1"},
		{"hollow-2", "hollow-2", "hollow-1"},
	}
	for _, tt := range tests {
		rp, err := s.Resume(ctx, tt.in)
		if tt.tip == "" {
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Resume(%q) = %v, want an ambiguous prefix", tt.in, err)
			}
			continue
		}
		if err != nil || rp.Tip.ID != tt.tip || rp.Turns.ID != tt.turns {
			t.Errorf("Resume(%q) = tip %q turns %q, %v; want %q %q", tt.in, rp.Tip.ID, rp.Turns.ID, err, tt.tip, tt.turns)
		}
	}
	if _, err := s.Resume(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Resume(ghost) = %v, want ErrNotFound", err)
	}
}
