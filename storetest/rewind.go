package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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
	if diff := cmp.Diff([]string{"active:q1", "active:a1", "rewound:q2", "rewound:a2"}, Contents(t, s, "r")); diff != "" {
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
	ids := AppendTexts(t, s, "r", "q1", "q2")
	a, _ := s.AppendMessage(ctx, "r", NewMessage{Role: RoleAssistant, Content: "a"})
	otherID := AppendTexts(t, s, "other", "x")[0]
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
	if diff := cmp.Diff([]string{"active:q1", "active:q2", "active:a"}, Contents(t, s, "r")); diff != "" {
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

func testConversation_LineageShowsEachTurnOnce(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	AppendTexts(t, s, "p", "a", "b")
	h := LockFor(t, s, "p")
	w, _ := s.ActiveWatermark(ctx, "p")
	AppendTexts(t, s, "p", "tail")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	AppendTexts(t, s, "c", "next")

	texts := func(ms []Message) (out []string) {
		for _, m := range ms {
			out = append(out, m.SessionID+":"+m.Content)
		}
		return out
	}
	model, err := s.Conversation(ctx, "c", ConversationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c:sum", "c:tail", "c:next"}, texts(model)); diff != "" {
		t.Errorf("model view:\n%s", diff)
	}
	display, err := s.Conversation(ctx, "p", ConversationOptions{Lineage: true})
	if err != nil {
		t.Fatal(err)
	}
	// "tail" was copied into c: shown once, at its first position, as the live copy.
	if diff := cmp.Diff([]string{"p:a", "p:b", "c:tail", "c:sum", "c:next"}, texts(display)); diff != "" {
		t.Errorf("lineage view:\n%s", diff)
	}
	if _, err := s.Conversation(ctx, "nope", ConversationOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

// testConversation_LineageFoldsAResentPrompt: a prompt said again in the
// continuation after a resume — the same role, text and time — is one turn
// of the lineage view, shown once at its first place; the same text said
// at another time, or twice within one session, is not folded (issue 34,
// item 3).
func testConversation_LineageFoldsAResentPrompt(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	said := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	if _, err := s.AppendMessages(ctx, "p", []NewMessage{
		{Role: RoleUser, Content: "hello", CreatedAt: said.Add(-time.Second)},
		{Role: RoleAssistant, Content: "hi", CreatedAt: said.Add(-time.Second)},
		{Role: RoleUser, Content: "book the trip", CreatedAt: said},
	}); err != nil {
		t.Fatal(err)
	}
	summarise(t, s, "p", "c")
	if _, err := s.AppendMessages(ctx, "c", []NewMessage{
		{Role: RoleUser, Content: "book the trip", CreatedAt: said}, // re-sent after the resume
		{Role: RoleAssistant, Content: "booked"},
		{Role: RoleUser, Content: "hello"}, // the same words, said again later
	}); err != nil {
		t.Fatal(err)
	}
	display, err := s.Conversation(ctx, "c", ConversationOptions{Lineage: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range display {
		got = append(got, m.SessionID+":"+m.Content)
	}
	want := []string{"p:hello", "p:hi", "c:book the trip", "c:summary of p", "c:booked", "c:hello"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lineage view (-want +got):\n%s", diff)
	}
}

func testFlags_ApplyToTheWholeLineage(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "a")
	continueAs(t, s, "a", "b")
	MustCreate(t, s, NewSession{ID: "x", ParentID: "b", Kind: ChildBranch})
	get := func(id string) Session {
		sess, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return sess
	}
	if n, err := s.SetHidden(ctx, "b", true); n != 2 || err != nil {
		t.Fatalf("hide: %d %v, want 2 sessions", n, err)
	}
	if !get("a").Hidden || !get("b").Hidden || get("x").Hidden {
		t.Errorf("hidden should cover a and b, not the branch x")
	}
	if _, err := s.SetPinned(ctx, "a", true); err != nil {
		t.Fatal(err)
	}
	if a := get("a"); !a.Pinned || a.Hidden || get("b").Hidden {
		t.Errorf("pinning unhides the lineage: %+v", a)
	}
	s.SetArchived(ctx, "a", true)
	if !get("b").Archived {
		t.Errorf("archive did not reach the tip")
	}
	s.MarkRead(ctx, "b", false)
	if !get("a").Unread {
		t.Errorf("unread did not reach the root")
	}
	s.MarkRead(ctx, "a", true)
	if get("b").Unread {
		t.Errorf("read did not reach the tip")
	}
	if _, err := s.SetArchived(ctx, "nope", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

func testDeleteSession_CascadesToDelegatesAndOrphansTheRest(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	MustCreate(t, s, NewSession{ID: "d1", ParentID: "p", Kind: ChildDelegate})
	MustCreate(t, s, NewSession{ID: "d2", ParentID: "d1", Kind: ChildDelegate})
	MustCreate(t, s, NewSession{ID: "br", ParentID: "p", Kind: ChildBranch})
	AppendTexts(t, s, "p", "findme-parent")
	continueAs(t, s, "p", "co")
	MustCreate(t, s, NewSession{ID: "brd", ParentID: "br", Kind: ChildDelegate})
	AppendTexts(t, s, "d2", "findme-delegate")

	set, err := s.DeletionSet(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"p", "d1", "d2"}, set); diff != "" {
		t.Errorf("deletion set:\n%s", diff)
	}
	// The cascade changed since it was read: refused, nothing deleted.
	if _, err := s.DeleteSession(ctx, "p", DeleteOptions{ExpectedIDs: []string{"p", "d1"}}); !errors.Is(err, ErrConflict) {
		t.Errorf("stale expected set: %v, want ErrConflict", err)
	}
	// A live lease on a delegate refuses it too.
	if _, _, err := s.AcquireCompressionLock(ctx, "d2", "busy", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteSession(ctx, "p", DeleteOptions{}); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("under a live lock: %v, want ErrLeaseHeld", err)
	}
	s.ReleaseCompressionLock(ctx, "d2", "busy")

	deleted, err := s.DeleteSession(ctx, "p", DeleteOptions{ExpectedIDs: []string{"d2", "p", "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 3 {
		t.Errorf("deleted %v", deleted)
	}
	for _, id := range []string{"p", "d1", "d2"} {
		if _, err := s.Session(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s still there: %v", id, err)
		}
	}
	for _, id := range []string{"br", "co"} {
		sess, err := s.Session(ctx, id)
		if err != nil || sess.ParentID != "" || sess.Kind != "" {
			t.Errorf("%s should be orphaned: %+v %v", id, sess, err)
		}
	}
	if sess, _ := s.Session(ctx, "brd"); sess.ParentID != "br" {
		t.Errorf("grandchild of an orphan keeps its parent: %+v", sess)
	}
	if _, err := s.DeleteSession(ctx, "p", DeleteOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
}

// rewinding a carried copy in the child hides it there, but the
// lineage view shows the parent's original again.
func testConversation_RewoundCopyHidesTheTurn(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	AppendTexts(t, s, "p", "one")
	h := LockFor(t, s, "p")
	w, _ := s.ActiveWatermark(ctx, "p")
	AppendTexts(t, s, "p", "UNDO-ME")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	cm, _ := s.Conversation(ctx, "c", ConversationOptions{})
	var copyID int64
	for _, m := range cm {
		if m.Content == "UNDO-ME" {
			copyID = m.ID
		}
	}
	if _, err := s.RewindTo(ctx, "c", copyID, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	view, _ := s.Conversation(ctx, "c", ConversationOptions{Lineage: true})
	var got []string
	for _, m := range view {
		got = append(got, fmt.Sprintf("%s/%d:%s", m.SessionID, m.ID, m.Content))
	}
	t.Logf("lineage view after rewinding the copy: %v", got)
	if strings.Contains(strings.Join(got, ","), "UNDO-ME") {
		t.Errorf("rewound turn still in the lineage view")
	}
}
