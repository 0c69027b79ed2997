package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

func testAppendUnderLease_NotHeldSaysSo(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	m := []NewMessage{{Role: RoleUser, Content: "x"}}
	_, err := s.AppendMessagesUnderLease(ctx, "s", "w1", m)
	if !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), "is not held") || strings.Contains(err.Error(), `held by ""`) {
		t.Errorf("never-taken lease: %v, want ErrLeaseLost saying the lease is not held", err)
	}
	if _, got, err := s.AcquireTurnLease(ctx, "s", "w2", 0); err != nil || !got {
		t.Fatal(got, err)
	}
	_, err = s.AppendMessagesUnderLease(ctx, "s", "w1", m)
	if !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), `held by "w2", not "w1"`) {
		t.Errorf("another's lease: %v, want ErrLeaseLost naming both holders", err)
	}
	_, err = s.CompactSession(ctx, "s", Compaction{Holder: "w1", Messages: m})
	if !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), "compression lock") || !strings.Contains(err.Error(), "is not held") {
		t.Errorf("never-taken compression lock: %v, want ErrLeaseLost saying it is not held", err)
	}
}

func testAppend_IdempotencyKeyReusedForDifferentMessage(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	first := NewMessage{Role: RoleAssistant, Content: "calling", IdempotencyKey: "k", TokenCount: 7,
		ToolCalls: []ToolCall{{ID: "c1", Name: "grep", Arguments: `{"q":"x"}`}}, Reasoning: "r", FinishReason: "tool_calls"}
	id, err := s.AppendMessage(ctx, "s", first)
	if err != nil {
		t.Fatal(err)
	}
	retry := first
	retry.TokenCount = 9 // a recount is still the same message
	if again, err := s.AppendMessage(ctx, "s", retry); err != nil || again != id {
		t.Fatalf("exact retry = %d, %v; want %d", again, err, id)
	}
	tests := []struct {
		field  string
		change func(m *NewMessage)
	}{
		{"role", func(m *NewMessage) { m.Role = RoleUser }},
		{"content", func(m *NewMessage) { m.Content = "other" }},
		{"tool name", func(m *NewMessage) { m.ToolName = "grep" }},
		{"tool call id", func(m *NewMessage) { m.ToolCallID = "c1" }},
		{"tool calls", func(m *NewMessage) { m.ToolCalls = []ToolCall{{ID: "c1", Name: "grep", Arguments: `{"q":"y"}`}} }},
		{"tool calls", func(m *NewMessage) { m.ToolCalls = nil }},
		{"reasoning", func(m *NewMessage) { m.Reasoning = "" }},
		{"finish reason", func(m *NewMessage) { m.FinishReason = "stop" }},
		{"summary mark", func(m *NewMessage) { m.Summary = true }},
	}
	for _, tc := range tests {
		m := first
		m.ToolCalls = append([]ToolCall(nil), first.ToolCalls...)
		tc.change(&m)
		_, err := s.AppendMessages(ctx, "s", []NewMessage{{Role: RoleUser, Content: "before"}, m})
		var conflict *IdempotencyConflictError
		if !errors.As(err, &conflict) || !errors.Is(err, ErrIdempotencyConflict) {
			t.Fatalf("%s changed: %v, want an *IdempotencyConflictError", tc.field, err)
		}
		if conflict.Field != tc.field || conflict.MessageID != id || conflict.Key != "k" {
			t.Errorf("%s changed: %+v", tc.field, conflict)
		}
	}
	if ms, _ := s.Messages(ctx, "s", MessageQuery{}); len(ms) != 1 {
		t.Errorf("%d rows after refused batches, want 1 (each batch is all or nothing)", len(ms))
	}
}

// compressInto publishes child as the compression child of parent (with
// one summary) and releases the lock.
func compressInto(t *testing.T, s *Store, parent, child string) {
	t.Helper()
	ctx := t.Context()
	h := LockFor(t, s, parent)
	w, err := s.ActiveWatermark(ctx, parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishCompressionChild(ctx, parent, Continuation{Holder: h, Watermark: w,
		Child:    NewSession{ID: child},
		Messages: []NewMessage{{Role: RoleSystem, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseCompressionLock(ctx, parent, h); err != nil {
		t.Fatal(err)
	}
}

func testAppend_ToCompressedSessionNamesTheContinuation(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	AppendTexts(t, s, "p", "one")
	compressInto(t, s, "p", "c1")
	compressInto(t, s, "c1", "c2")
	for _, tc := range []struct{ session, child, tip string }{{"p", "c1", "c2"}, {"c1", "c2", "c2"}} {
		_, err := s.AppendMessage(ctx, tc.session, NewMessage{Role: RoleUser, Content: "late"})
		var cont *ContinuedError
		if !errors.As(err, &cont) || !errors.Is(err, ErrSessionClosed) {
			t.Fatalf("append to %s: %v (%T), want a *ContinuedError matching ErrSessionClosed", tc.session, err, err)
		}
		if cont.SessionID != tc.session || cont.ChildID != tc.child || cont.TipID != tc.tip {
			t.Errorf("append to %s: %+v, want child %s tip %s", tc.session, cont, tc.child, tc.tip)
		}
		if !strings.Contains(err.Error(), `"`+tc.tip+`"`) {
			t.Errorf("message %q does not name the tip %q", err, tc.tip)
		}
	}
	// A compressor that comes back to the old parent is told the same.
	h := LockFor(t, s, "p")
	_, err := s.CompactSession(ctx, "p", Compaction{Holder: h, Messages: []NewMessage{{Role: RoleSystem, Content: "s"}}})
	var cont *ContinuedError
	if !errors.As(err, &cont) || cont.ChildID != "c1" {
		t.Errorf("compact the continued parent: %v, want a *ContinuedError naming c1", err)
	}
}

// An append refused because compression closed the session leaves nothing
// behind, even when it held a new message after a retried one (the insert
// runs before the session's counters refuse it); a retry alone still gets
// its id. Each new message of a missing session is ErrNotFound.
func testAppend_ToCompressedSessionKeepsNothing(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	first := NewMessage{Role: RoleUser, Content: "one", IdempotencyKey: "k1"}
	ids, err := s.AppendMessages(ctx, "p", []NewMessage{first})
	if err != nil {
		t.Fatal(err)
	}
	compressInto(t, s, "p", "c1")
	before, err := s.Session(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		session string
		batch   []NewMessage
		want    error // nil: the ids of the retried messages
	}{
		{"RetryThenNew", "p", []NewMessage{first, {Role: RoleUser, Content: "late", IdempotencyKey: "k2"}}, ErrSessionClosed},
		{"NewThenRetry", "p", []NewMessage{{Role: RoleUser, Content: "late"}, first}, ErrSessionClosed},
		{"RetryAlone", "p", []NewMessage{first}, nil},
		{"MissingSession", "ghost", []NewMessage{{Role: RoleUser, Content: "x"}}, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.AppendMessages(ctx, tt.session, tt.batch)
			switch {
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Fatalf("AppendMessages: %v, want %v", err, tt.want)
			case tt.want == nil && (err != nil || !slices.Equal(got, ids)):
				t.Fatalf("AppendMessages: %v, %v, want %v", got, err, ids)
			}
		})
	}
	// An empty append names no message to insert: the session is looked
	// up all the same.
	if _, err := s.AppendMessages(ctx, "ghost", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("an empty append to a missing session: %v, want ErrNotFound", err)
	}
	if got, err := s.AppendMessages(ctx, "p", nil); err != nil || len(got) != 0 {
		t.Errorf("an empty append to a closed session: %v, %v, want no ids and no error", got, err)
	}
	after, err := s.Session(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(ctx, "p", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Content == "late" {
			t.Errorf("a refused message was kept: %+v", m)
		}
	}
	if after.MessageCount != before.MessageCount || int64(len(msgs)) != before.MessageCount {
		t.Errorf("the closed session changed: count %d -> %d, %d messages", before.MessageCount, after.MessageCount, len(msgs))
	}
}
