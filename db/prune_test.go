package db

import (
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
