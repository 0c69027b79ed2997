package storetest

import (
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// appendAt appends one user message stamped at.
func appendAt(t *testing.T, s *Store, id string, at time.Time) {
	t.Helper()
	if _, err := s.AppendMessage(t.Context(), id, NewMessage{Role: RoleUser, Content: "at " + at.String(), CreatedAt: at}); err != nil {
		t.Fatalf("append to %s: %v", id, err)
	}
}

func conversationActiveAt(t *testing.T, s *Store, id string) time.Time {
	t.Helper()
	sess, err := s.Session(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sess.ConversationActiveAt
}

// The digest's §9 effective last activity: a conversation listed once (at
// its tip) sorts by the newest message or heartbeat anywhere in its
// compression chain, never less; a delegate moves nothing; deleting a
// parent recomputes the orphaned continuation.
func testConversationActivity_ChainOrdersTheListing(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	base := time.Now().Truncate(time.Millisecond)
	for _, id := range []string{"a", "b", "c"} {
		MustCreate(t, s, NewSession{ID: id})
	}
	appendAt(t, s, "a", base.Add(30*time.Second)) // a's newest turn, stamped ahead
	appendAt(t, s, "b", base.Add(10*time.Second))
	// a continues in a2, which starts now (before a's newest turn) and
	// carries no turn of a's (the watermark is a's newest row).
	h := LockFor(t, s, "a")
	w, _ := s.ActiveWatermark(ctx, "a")
	if _, err := s.PublishCompressionChild(ctx, "a", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "a2"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true, CreatedAt: base}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseCompressionLock(ctx, "a", h); err != nil {
		t.Fatal(err)
	}
	conv := RecentQuery{Conversations: true}
	if diff := cmp.Diff([]string{"a2", "b", "c"}, RecentIDs(t, s, conv)); diff != "" {
		t.Errorf("after the continuation (-want +got):\n%s", diff)
	}
	if got := conversationActiveAt(t, s, "a2"); !got.Equal(base.Add(30 * time.Second)) {
		t.Errorf("a2 ConversationActiveAt = %v, want a's newest turn %v", got, base.Add(30*time.Second))
	}
	page, err := s.RecentSessions(ctx, RecentQuery{Conversations: true, Limit: 1})
	if err != nil || len(page.Sessions) != 1 || !page.Sessions[0].LastActiveAt.Equal(base.Add(30*time.Second)) {
		t.Errorf("listed a2 = %+v, %v; want LastActiveAt %v", page.Sessions, err, base.Add(30*time.Second))
	}

	// A heartbeat is activity; one on an ancestor reaches the tip.
	if err := s.TouchActivity(ctx, "c", base.Add(40*time.Second), "running tests", ""); err != nil {
		t.Fatal(err)
	}
	if got := RecentIDs(t, s, conv); !cmp.Equal(got, []string{"c", "a2", "b"}) {
		t.Errorf("after c's heartbeat: %v, want [c a2 b]", got)
	}
	if err := s.TouchActivity(ctx, "a", base.Add(50*time.Second), "", ""); err != nil {
		t.Fatal(err)
	}
	if got := RecentIDs(t, s, conv); !cmp.Equal(got, []string{"a2", "c", "b"}) {
		t.Errorf("after a heartbeat on a2's ancestor: %v, want [a2 c b]", got)
	}

	// A delegate's turn is its own conversation's: b stays where it was.
	MustCreate(t, s, NewSession{ID: "b-helper", ParentID: "b", Kind: ChildDelegate})
	appendAt(t, s, "b-helper", base.Add(60*time.Second))
	if got := RecentIDs(t, s, conv); !cmp.Equal(got, []string{"a2", "c", "b"}) {
		t.Errorf("after a delegate's turn: %v, want [a2 c b]", got)
	}

	// Never decreasing: an older-stamped turn leaves the activity as it was.
	appendAt(t, s, "a2", base.Add(-time.Hour))
	if got := conversationActiveAt(t, s, "a2"); !got.Equal(base.Add(50 * time.Second)) {
		t.Errorf("after an older turn: %v, want %v", got, base.Add(50*time.Second))
	}

	// Deleting the parent makes the continuation a root of its own: its
	// activity is its own again (its rows are older than its start).
	if _, err := s.DeleteSession(ctx, "a", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	a2, err := s.Session(ctx, "a2")
	if err != nil {
		t.Fatal(err)
	}
	if a2.ParentID != "" || !a2.ConversationActiveAt.Equal(a2.StartedAt) {
		t.Errorf("a2 after its parent's delete: parent %q, active %v, want no parent and its start %v",
			a2.ParentID, a2.ConversationActiveAt, a2.StartedAt)
	}
	if got := RecentIDs(t, s, conv); !cmp.Equal(got, []string{"c", "b", "a2"}) {
		t.Errorf("after the delete: %v, want [c b a2]", got)
	}
}

// Keyset pages over a listing whose activity moves while it is read: a
// conversation that becomes active moves above the cursor (shown on a
// fresh first page, not repeated on the next), and every conversation that
// did not move is listed exactly once.
func testConversationActivity_KeysetPagingWhileActive(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var ids []string
	for i := range 12 {
		id := string(rune('a' + i))
		MustCreate(t, s, NewSession{ID: id})
		appendAt(t, s, id, base.Add(time.Duration(i)*time.Minute))
		ids = append(ids, id) // l newest ... a oldest
	}
	q := RecentQuery{Conversations: true, Limit: 4}
	seen := map[string]int{}
	moved := map[string]bool{}
	for page := 0; ; page++ {
		p, err := s.RecentSessions(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, sum := range p.Sessions {
			seen[sum.ID]++
		}
		switch page {
		case 0: // l k j i: activity on one already read, and on one not yet read
			Tick()
			appendAt(t, s, "k", time.Now())
			Tick()
			appendAt(t, s, "c", time.Now())
			Tick()
			moved["k"], moved["c"] = true, true
		case 1: // h g f e: a continuation of one not yet read
			continueAs(t, s, "b", "b2")
			moved["b"], moved["b2"] = true, true
		}
		if p.Next == "" {
			break
		}
		q.Cursor = p.Next
	}
	for _, id := range ids {
		if !moved[id] && seen[id] != 1 {
			t.Errorf("%s listed %d times, want once (seen %v)", id, seen[id], seen)
		}
	}
	for id := range moved {
		if seen[id] > 1 {
			t.Errorf("%s, which became active, listed %d times", id, seen[id])
		}
	}
	if got := RecentIDs(t, s, RecentQuery{Conversations: true, Limit: 3})[:3]; !cmp.Equal(got, []string{"b2", "c", "k"}) {
		t.Errorf("a fresh listing starts %v, want the conversations that became active [b2 c k]", got)
	}
}
