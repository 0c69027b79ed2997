package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"
)

func testPrune(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	end := func(ids ...string) {
		for _, id := range ids {
			if _, err := s.EndSession(ctx, id, "done"); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Old enough and prunable: a plain session (with messages), a lineage
	// ended throughout, a parent with a live branch child, and a bulk that
	// crosses batch boundaries.
	newTestSession(t, s, "old")
	AppendTexts(t, s, "old", "gone with the session")
	newTestSession(t, s, "q")
	AppendTexts(t, s, "q", "x")
	h := LockFor(t, s, "q")
	if _, err := s.PublishCompressionChild(ctx, "q", Continuation{Holder: h, Child: NewSession{ID: "q2"}}); err != nil {
		t.Fatal(err)
	}
	s.ReleaseCompressionLock(ctx, "q", h)
	newTestSession(t, s, "parent")
	MustCreate(t, s, NewSession{ID: "kid", ParentID: "parent", Kind: ChildBranch})
	const bulk = 230
	for i := range bulk {
		newTestSession(t, s, fmt.Sprintf("bulk%03d", i))
		end(fmt.Sprintf("bulk%03d", i))
	}
	// Old enough but spared: pinned; an ancestor of a live continuation;
	// under a live lease.
	newTestSession(t, s, "pinned")
	s.SetPinned(ctx, "pinned", true)
	newTestSession(t, s, "p")
	hp := LockFor(t, s, "p")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: hp, Child: NewSession{ID: "p-live"}}); err != nil {
		t.Fatal(err)
	}
	s.ReleaseCompressionLock(ctx, "p", hp)
	newTestSession(t, s, "leased")
	s.AcquireCompressionLock(ctx, "leased", "busy", time.Hour)
	end("old", "q2", "parent", "pinned", "leased")
	// Everything so far happened two hours ago.
	ago := (2 * time.Hour).Milliseconds()
	e.Exec(t, s, `UPDATE sessions SET started_at = started_at - CAST($1 AS BIGINT),
		ended_at = ended_at - CAST($1 AS BIGINT), last_message_at = last_message_at - CAST($1 AS BIGINT)`, ago)
	e.Exec(t, s, "UPDATE messages SET created_at = created_at - CAST($1 AS BIGINT)", ago)
	newTestSession(t, s, "fresh") // ended after the cutoff
	end("fresh")

	res, err := s.Prune(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := PruneResult{Pruned: 4 + bulk, Spared: 2, Orphaned: 1}
	if res != want {
		t.Errorf("Prune = %+v, want %+v", res, want)
	}
	for _, id := range []string{"old", "q", "q2", "parent", "bulk000", "bulk229"} {
		if _, err := s.Session(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s survived: %v", id, err)
		}
	}
	for _, id := range []string{"pinned", "p", "p-live", "leased", "fresh", "kid"} {
		if _, err := s.Session(ctx, id); err != nil {
			t.Errorf("%s was pruned: %v", id, err)
		}
	}
	if kid, _ := s.Session(ctx, "kid"); kid.ParentID != "" {
		t.Errorf("kid should be orphaned, parent %q", kid.ParentID)
	}
	if v, err := s.Meta(ctx, "last_prune"); err != nil || v == "" {
		t.Errorf("last_prune not recorded: %q %v", v, err)
	}
	if _, err := s.Prune(ctx, 0); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("zero age: %v, want ErrInvalidInput", err)
	}
}

// Orphaned counts a delegate child that is pruned right after.
func testPrune_OrphansCountOnlySurvivors(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "P")
	MustCreate(t, s, NewSession{ID: "D", ParentID: "P", Kind: ChildDelegate})
	s.EndSession(ctx, "P", "done")
	time.Sleep(3 * time.Millisecond)
	s.EndSession(ctx, "D", "done")
	time.Sleep(20 * time.Millisecond)
	res, err := s.Prune(ctx, 5*time.Millisecond)
	left, _ := s.ListSessions(ctx, SessionFilter{Limit: 10})
	t.Logf("prune %+v %v, left %d", res, err, len(left))
	if res.Orphaned != len(left) {
		t.Errorf("Orphaned=%d but %d sessions remain", res.Orphaned, len(left))
	}
}
