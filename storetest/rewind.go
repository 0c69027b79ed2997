package storetest

import (
	"errors"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

func testRewindTo(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "r")
	ids, err := s.AppendMessages(ctx, "r", []NewMessage{
		{Role: RoleUser, Content: "q1"},
		{Role: RoleAssistant, Content: "a1", ToolCalls: []ToolCall{{ID: "c1", Name: "ls"}}},
		{Role: RoleUser, Content: "q2"},
		{Role: RoleAssistant, Content: "a2", ToolCalls: []ToolCall{{ID: "c2", Name: "cat"}, {ID: "c3", Name: "cat"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := ids
	q2 := "q2"
	res, err := s.RewindTo(ctx, "r", ids[2], RewindOptions{ExpectedActiveIDs: seen, ExpectedContent: &q2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rewound != 2 || res.HeadID != ids[1] || res.Target.Content != "q2" {
		t.Errorf("result %+v", res)
	}
	if diff := cmp.Diff([]string{"active:q1", "active:a1", "rewound:q2", "rewound:a2"}, contents(t, s, "r")); diff != "" {
		t.Errorf("rows:\n%s", diff)
	}
	sess, _ := s.Session(ctx, "r")
	if sess.MessageCount != 2 || sess.ToolCallCount != 1 || sess.RewindCount != 1 {
		t.Errorf("counters: messages %d tool calls %d rewinds %d, want 2 1 1", sess.MessageCount, sess.ToolCallCount, sess.RewindCount)
	}
	// Search and the conversation no longer show the rewound turn.
	conv, _ := s.Conversation(ctx, "r", ConversationOptions{})
	if len(conv) != 2 {
		t.Errorf("conversation has %d rows, want 2", len(conv))
	}
}

func testRewindTo_Refusals(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "r")
	newTestSession(t, s, "other")
	ids := appendTexts(t, s, "r", "q1", "q2")
	a, _ := s.AppendMessage(ctx, "r", NewMessage{Role: RoleAssistant, Content: "a"})
	otherID := appendTexts(t, s, "other", "x")[0]
	stale := "something else"

	cases := []struct {
		name    string
		target  int64
		o       RewindOptions
		wantErr error
	}{
		{"assistant target", a, RewindOptions{}, ErrInvalidInput},
		{"zero target", 0, RewindOptions{}, ErrInvalidInput},
		{"unknown message", 999, RewindOptions{}, ErrNotFound},
		{"another session's message", otherID, RewindOptions{}, ErrNotFound},
		{"content changed", ids[1], RewindOptions{ExpectedContent: &stale}, ErrConflict},
		{"active set changed", ids[1], RewindOptions{ExpectedActiveIDs: ids}, ErrConflict},
	}
	for _, c := range cases {
		if _, err := s.RewindTo(ctx, "r", c.target, c.o); !errors.Is(err, c.wantErr) {
			t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
		}
	}
	// A live turn lease refuses it, unless the caller holds it.
	if _, _, err := s.AcquireTurnLease(ctx, "r", "turn-1", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RewindTo(ctx, "r", ids[1], RewindOptions{}); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("under another's lease: %v, want ErrLeaseHeld", err)
	}
	if diff := cmp.Diff([]string{"active:q1", "active:q2", "active:a"}, contents(t, s, "r")); diff != "" {
		t.Errorf("refused rewinds changed rows:\n%s", diff)
	}
	if _, err := s.RewindTo(ctx, "r", ids[1], RewindOptions{LeaseHolder: "turn-1"}); err != nil {
		t.Errorf("under own lease: %v", err)
	}
	// The target is rewound now: rewinding to it again is refused.
	if _, err := s.RewindTo(ctx, "r", ids[1], RewindOptions{LeaseHolder: "turn-1"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("rewind to a rewound message: %v, want ErrInvalidInput", err)
	}
}
