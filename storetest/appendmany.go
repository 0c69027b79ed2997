package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// An append of many messages stores what as many appends of one message
// each store, in order: an engine may write the batch's rows together
// (PostgreSQL: one multi-row INSERT), and every field, every byte and
// every id must come out as it would have row by row.

// manyMessages is n messages that between them set every field of
// NewMessage, with text that JSON and SQL quoting both have to escape.
func manyMessages(n int, tag string) []NewMessage {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	awkward := "quote \" backslash \\ newline \n tab \t ctrl \x01\x1f seps \u2028\u2029 <b>&amp;</b> 日本語 👩‍💻 \ufffd '--"
	ms := make([]NewMessage, n)
	for i := range ms {
		var m NewMessage
		switch i % 6 {
		case 0:
			m = NewMessage{Role: RoleUser, Content: fmt.Sprintf("%s question %d: %s", tag, i, awkward),
				IdempotencyKey: fmt.Sprintf("%s-key-%d", tag, i), Metadata: `{"chat": 42, "b":[1, "ü"]}`}
		case 1:
			m = NewMessage{Role: RoleAssistant, Content: fmt.Sprintf("answer %d", i), Reasoning: "think " + awkward,
				ReasoningContent: "rc", ReasoningDetails: `[{"type":"thinking","thinking":"hm","signature":"Eq=="}]`,
				TokenCount: int64(i), Model: "gpt-4o", FinishReason: "tool_calls",
				ToolCalls: []ToolCall{{ID: fmt.Sprint("call-", i), Name: "shell", Arguments: `{"cmd":"ls \"/tmp\""}`}}}
		case 2:
			m = NewMessage{Role: RoleTool, ToolName: "shell", ToolCallID: fmt.Sprint("call-", i-1),
				Content: fmt.Sprintf("result %d\n%s", i, awkward), EffectDisposition: "applied",
				ToolEndedAt: at.Add(time.Duration(i) * time.Second), ToolDuration: 1500 * time.Millisecond}
		case 3:
			m = shapedMessage()
			m.PlatformMessageID = fmt.Sprintf("%s-tg-%d", tag, i)
		case 4:
			m = NewMessage{Role: RoleUser, Content: strings.Repeat("long line of text ", 200), Observed: true,
				DisplayKind: DisplayHidden}
		case 5:
			m = NewMessage{Role: RoleAssistant, Content: "", Parts: []Part{{Type: PartText, Text: "only parts " + awkward}}}
		}
		if i%4 != 3 { // the rest keep "now", below
			m.CreatedAt = at.Add(time.Duration(i) * time.Millisecond)
		}
		ms[i] = m
	}
	return ms
}

// storedAs are the fields a comparison of two sessions' copies of the
// same messages leaves out: where the rows are, and what is minted.
var storedAs = cmp.Options{
	cmpopts.IgnoreFields(Message{}, "ID", "SessionID", "UID", "CallUID", "CreatedAt"),
	cmpopts.IgnoreFields(ToolCall{}, "UID"),
	cmpopts.EquateEmpty(),
}

func testAppendMessages_ManyStoreWhatOneEachStores(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "batch")
	newTestSession(t, s, "single")
	const n = 300
	in := manyMessages(n, "b")
	start := time.Now().Add(-time.Second)
	ids, err := s.AppendMessages(ctx, "batch", in)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manyMessages(n, "b") {
		if _, err := s.AppendMessage(ctx, "single", m); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Messages(ctx, "batch", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Messages(ctx, "single", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != n || len(got) != n || len(want) != n {
		t.Fatalf("%d ids, %d rows in the batch's session, %d in the single appends'; want %d each", len(ids), len(got), len(want), n)
	}
	if diff := cmp.Diff(want, got, storedAs); diff != "" {
		t.Errorf("one AppendMessages of %d (+) against %d AppendMessage (-):\n%s", n, n, diff)
	}
	for i := range got {
		if got[i].ID != ids[i] {
			t.Fatalf("message %d: returned id %d, stored in order as %d: the ids do not follow the messages", i, ids[i], got[i].ID)
		}
		if i > 0 && ids[i] <= ids[i-1] {
			t.Fatalf("ids %d, %d: not ascending in the batch's order", ids[i-1], ids[i])
		}
		if in[i].CreatedAt.IsZero() {
			if got[i].CreatedAt.Before(start) || got[i].CreatedAt.After(time.Now().Add(time.Second)) {
				t.Errorf("message %d: created at %v, want the append's time", i, got[i].CreatedAt)
			}
		} else if !got[i].CreatedAt.Equal(in[i].CreatedAt) {
			t.Errorf("message %d: created at %v, want %v", i, got[i].CreatedAt, in[i].CreatedAt)
		}
	}
	b, _ := s.Session(ctx, "batch")
	one, _ := s.Session(ctx, "single")
	if b.MessageCount != n || b.ToolCallCount != one.ToolCallCount || b.ToolCallCount == 0 {
		t.Errorf("counters: %d messages and %d tool calls, want %d and %d", b.MessageCount, b.ToolCallCount, n, one.ToolCallCount)
	}
	// The same call again is a retry: every message is found by its key or
	// platform id, or is new again (no key: a caller's own choice).
	again, err := s.AppendMessages(ctx, "batch", in[:12])
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range again {
		keyed := in[i].IdempotencyKey != "" || in[i].PlatformMessageID != ""
		if keyed != (id == ids[i]) {
			t.Errorf("retried message %d (keyed %v): id %d, first %d", i, keyed, id, ids[i])
		}
	}
}

// A message that repeats an earlier one of the same batch — its key or
// its platform id — answers with the earlier one's id, and a different
// message under a used key refuses the whole batch.
func testAppendMessages_RepeatsWithinTheBatch(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s")
	a := NewMessage{Role: RoleUser, Content: "a", IdempotencyKey: "k-a"}
	b := NewMessage{Role: RoleUser, Content: "b", PlatformMessageID: "p-b"}
	bAgain := b
	bAgain.IdempotencyKey = "k-b2" // a re-delivery given a key of its own
	plain := NewMessage{Role: RoleAssistant, Content: "plain"}
	ids, err := s.AppendMessages(ctx, "s", []NewMessage{a, plain, b, a, plain, bAgain, {Role: RoleUser, Content: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if ids[3] != ids[0] || ids[5] != ids[2] || ids[4] == ids[1] {
		t.Errorf("ids %v: want the 4th the 1st's, the 6th the 3rd's, the 5th a row of its own", ids)
	}
	if counted, rows := messageCount(t, s, "s"); counted != 5 || rows != 5 {
		t.Errorf("%d counted, %d rows; want 5 and 5", counted, rows)
	}

	tests := []struct {
		name  string
		batch []NewMessage
	}{
		{"KeyReusedForAnotherMessage", []NewMessage{{Role: RoleUser, Content: "x", IdempotencyKey: "k-x"}, plain,
			{Role: RoleUser, Content: "not x", IdempotencyKey: "k-x"}}},
		{"PlatformIDReusedForAnotherMessage", []NewMessage{plain, {Role: RoleUser, Content: "y", PlatformMessageID: "p-y"},
			{Role: RoleUser, Content: "not y", PlatformMessageID: "p-y"}}},
		{"KeyOfAStoredMessage", []NewMessage{plain, {Role: RoleUser, Content: "not a", IdempotencyKey: "k-a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.AppendMessages(ctx, "s", tt.batch)
			var c *IdempotencyConflictError
			if !errors.As(err, &c) || !errors.Is(err, ErrIdempotencyConflict) {
				t.Fatalf("AppendMessages = %v, want an *IdempotencyConflictError", err)
			}
			if counted, rows := messageCount(t, s, "s"); counted != 5 || rows != 5 {
				t.Errorf("a refused batch left %d counted, %d rows; want 5 and 5", counted, rows)
			}
		})
	}
}

// A batch that cannot be stored whole stores nothing: into a session that
// does not exist (ErrNotFound), or holding text the engine cannot keep
// (PostgreSQL: a NUL byte, ErrInvalidInput); an engine that keeps it gives
// it back byte-exact.
func testAppendMessages_RefusedWhole(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s")
	ok := NewMessage{Role: RoleUser, Content: "fine"}
	if _, err := s.AppendMessages(ctx, "ghost", []NewMessage{ok, ok, ok}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a batch into a missing session: %v, want ErrNotFound", err)
	}
	nul := NewMessage{Role: RoleUser, Content: "before\x00after"}
	ids, err := s.AppendMessages(ctx, "s", []NewMessage{ok, ok, nul, ok})
	switch {
	case errors.Is(err, ErrInvalidInput):
		if counted, rows := messageCount(t, s, "s"); counted != 0 || rows != 0 {
			t.Errorf("a refused batch left %d counted, %d rows; want none", counted, rows)
		}
	case err != nil:
		t.Fatalf("a batch with a NUL byte: %v, want it stored or ErrInvalidInput", err)
	default:
		got, err := s.Messages(ctx, "s", MessageQuery{})
		if err != nil || len(got) != 4 || got[2].ID != ids[2] || got[2].Content != nul.Content {
			t.Fatalf("a batch with a NUL byte read back as %v, %v; want 4 rows, the third byte-exact", got, err)
		}
	}
	if all := rowCounts(t, s); all.Sessions != 1 {
		t.Errorf("%d sessions, want 1: a refused batch made one", all.Sessions)
	}
}
