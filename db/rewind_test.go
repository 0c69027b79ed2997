package db

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConversation_LineageShowsEachTurnOnce(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	newTestSession(t, s, "p")
	appendTexts(t, s, "p", "a", "b")
	h := lockFor(t, s, "p")
	w, _ := s.ActiveWatermark(ctx, "p")
	appendTexts(t, s, "p", "tail")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	appendTexts(t, s, "c", "next")

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

func TestFlags_ApplyToTheWholeLineage(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	newTestSession(t, s, "a")
	continueAs(t, s, "a", "b")
	mustCreate(t, s, NewSession{ID: "x", ParentID: "b", Kind: ChildBranch})
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

func TestDeleteSession_CascadesToDelegatesAndOrphansTheRest(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	newTestSession(t, s, "p")
	mustCreate(t, s, NewSession{ID: "d1", ParentID: "p", Kind: ChildDelegate})
	mustCreate(t, s, NewSession{ID: "d2", ParentID: "d1", Kind: ChildDelegate})
	mustCreate(t, s, NewSession{ID: "br", ParentID: "p", Kind: ChildBranch})
	appendTexts(t, s, "p", "findme-parent")
	continueAs(t, s, "p", "co")
	mustCreate(t, s, NewSession{ID: "brd", ParentID: "br", Kind: ChildDelegate})
	appendTexts(t, s, "d2", "findme-delegate")

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
