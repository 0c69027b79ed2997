package db

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

func TestVacuum_ShrinksTheFileAndTruncatesTheWAL(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	big := make([]NewMessage, 200)
	for i := range big {
		big[i] = NewMessage{Role: RoleUser, Content: fmt.Sprintf("%d %0500d", i, i)}
	}
	for i := range 10 {
		id := fmt.Sprintf("s%d", i)
		newTestSession(t, s, id)
		if _, err := s.AppendMessages(ctx, id, big); err != nil {
			t.Fatal(err)
		}
		s.EndSession(ctx, id, "done")
	}
	newTestSession(t, s, "keep")
	appendTexts(t, s, "keep", "still here")
	time.Sleep(10 * time.Millisecond)
	if _, err := s.Prune(ctx, 5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	res, err := s.Vacuum(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.FreePagesBefore == 0 || res.FreePagesAfter != 0 || res.SizeAfter >= res.SizeBefore {
		t.Errorf("vacuum did not compact: %+v", res)
	}
	if fi, err := os.Stat(s.Path() + "-wal"); err != nil || fi.Size() != 0 {
		t.Errorf("WAL after vacuum: %v %v, want an empty (truncated) file", fi.Size(), err)
	}
	// The store writes and reads on after it, identity intact.
	if _, err := s.AppendMessage(ctx, "keep", NewMessage{Role: RoleUser, Content: "after vacuum"}); err != nil {
		t.Fatalf("write after vacuum: %v", err)
	}
	if got := contents(t, s, "keep"); len(got) != 2 {
		t.Errorf("rows after vacuum: %v", got)
	}
	if v, _ := s.Meta(ctx, "last_vacuum"); v == "" {
		t.Errorf("last_vacuum not recorded")
	}
	if h, err := Verify(ctx, s.Path()); err != nil || h.Health != HealthVerified {
		t.Errorf("verify after vacuum: %+v %v", h, err)
	}
}

func TestInfo(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	newTestSession(t, s, "a")
	appendTexts(t, s, "a", "one", "two")
	in, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.Sessions != 1 || in.Messages != 2 || in.JournalMode != "wal" || in.SchemaVersion < 3 ||
		in.PageSize == 0 || in.PageCount == 0 || in.FileBytes == 0 || in.FTSStale || in.LastVacuum != "" {
		t.Errorf("Info = %+v", in)
	}
	if _, err := s.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	if in, _ := s.Info(ctx); in.LastVacuum == "" || in.WALBytes != 0 {
		t.Errorf("after vacuum: last vacuum %q, WAL %d bytes", in.LastVacuum, in.WALBytes)
	}
}

func TestPrune(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
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
	appendTexts(t, s, "old", "gone with the session")
	newTestSession(t, s, "q")
	appendTexts(t, s, "q", "x")
	h := lockFor(t, s, "q")
	if _, err := s.PublishCompressionChild(ctx, "q", Continuation{Holder: h, Child: NewSession{ID: "q2"}}); err != nil {
		t.Fatal(err)
	}
	s.ReleaseCompressionLock(ctx, "q", h)
	newTestSession(t, s, "parent")
	mustCreate(t, s, NewSession{ID: "kid", ParentID: "parent", Kind: ChildBranch})
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
	hp := lockFor(t, s, "p")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: hp, Child: NewSession{ID: "p-live"}}); err != nil {
		t.Fatal(err)
	}
	s.ReleaseCompressionLock(ctx, "p", hp)
	newTestSession(t, s, "leased")
	s.AcquireCompressionLock(ctx, "leased", "busy", time.Hour)
	end("old", "q2", "parent", "pinned", "leased")
	time.Sleep(30 * time.Millisecond)
	newTestSession(t, s, "fresh") // ended after the cutoff
	end("fresh")

	res, err := s.Prune(ctx, 20*time.Millisecond)
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
