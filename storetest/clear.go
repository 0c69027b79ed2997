package storetest

import (
	"errors"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

// testClearConversation: clearing deletes every message and receipt of
// the lineage, root to tip, and keeps the sessions (title, link, the
// tip); search finds nothing of it; a branch is left alone; each cleared
// session's revision moves once; a foreign turn lease refuses it and
// nothing changes; clearing again is a no-op.
func testClearConversation(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	displayConversation(t, s) // p continued in c, with receipts
	MustCreate(t, s, NewSession{ID: "b", Source: "test", ParentID: "c", Kind: ChildBranch})
	AppendTexts(t, s, "b", "branch text")
	if err := s.SetTitle(ctx, "c", "Kept"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AcquireTurnLease(ctx, "c", "other", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClearConversation(ctx, "p", ClearOptions{}); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("clear under another's turn lease: %v, want ErrLeaseHeld", err)
	}
	if ms, _ := s.Conversation(ctx, "c", ConversationOptions{Lineage: true}); len(ms) == 0 {
		t.Error("a refused clear deleted messages")
	}
	before, _ := s.Session(ctx, "c")
	res, err := s.ClearConversation(ctx, "c", ClearOptions{LeaseHolder: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if res.RootID != "p" || len(res.SessionIDs) != 2 || res.Messages == 0 || res.Receipts != 2 {
		t.Errorf("ClearConversation: %+v", res)
	}
	for _, id := range []string{"p", "c"} {
		sess, err := s.Session(ctx, id)
		if err != nil || sess.MessageCount != 0 {
			t.Errorf("%s after the clear: %+v %v", id, sess, err)
		}
	}
	after, _ := s.Session(ctx, "c")
	if after.Title != "Kept" || after.ParentID != "p" || after.DisplayRevision != before.DisplayRevision+1 {
		t.Errorf("c after the clear: title %q parent %q revision %d -> %d", after.Title, after.ParentID, before.DisplayRevision, after.DisplayRevision)
	}
	if pg, err := s.DisplayPage(ctx, "p", DisplayPageOptions{}); err != nil || len(pg.Items) != 0 || pg.TipID != "c" {
		t.Errorf("display after the clear: %+v %v", pg, err)
	}
	if hits, err := s.Search(ctx, "tail", SearchOptions{}); err != nil || len(hits) != 0 {
		t.Errorf("search after the clear: %v %v", hits, err)
	}
	if got := Contents(t, s, "b"); len(got) != 1 {
		t.Errorf("the branch lost its messages: %q", got)
	}
	again, err := s.ClearConversation(ctx, "p", ClearOptions{LeaseHolder: "other"})
	if err != nil || again.Messages != 0 || again.Receipts != 0 {
		t.Errorf("second clear: %+v %v", again, err)
	}
	if c, _ := s.Session(ctx, "c"); c.DisplayRevision != after.DisplayRevision {
		t.Error("a clear with nothing to clear moved the revision")
	}
	if _, err := s.ClearConversation(ctx, "nope", ClearOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}
