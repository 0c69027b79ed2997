package db

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/storetest"
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
	storetest.AppendTexts(t, s.Store, "keep", "still here")
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
	if got := storetest.Contents(t, s.Store, "keep"); len(got) != 2 {
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
	storetest.AppendTexts(t, s.Store, "a", "one", "two")
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

// Prune's cursor is advanced inside its write callback; when the
// batch is replayed (another caller's statement interrupted mid-batch rolls
// everyone back) the replay starts past the first page.
func TestPrune_ReplayedBatchStartsFromItsOwnCursor(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	for i := range 150 {
		id := fmt.Sprintf("s%03d", i)
		newTestSession(t, s, id)
		if _, err := s.EndSession(ctx, id, "done"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	ictx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var res PruneResult
	outs := queueBehindMu(t, s,
		func() error {
			var err error
			res, err = s.Prune(context.Background(), 5*time.Millisecond)
			return err
		},
		func() error {
			return s.w.write(ictx, 5*time.Second, func(ctx context.Context, tx genDBTX) error {
				time.AfterFunc(20*time.Millisecond, cancel)
				_, err := tx.ExecContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 50000000)
					INSERT INTO meta(key, value, updated_at) SELECT 'r'||x, 'v', 0 FROM c`)
				return err
			})
		},
	)
	err0, _ := wait(t, outs[0], 20*time.Second)
	err1, _ := wait(t, outs[1], 20*time.Second)
	left, _ := s.ListSessions(ctx, SessionFilter{Limit: 1000})
	t.Logf("prune: %+v %v; interrupted: %v; sessions left: %d", res, err0, err1, len(left))
	if len(left) != 0 {
		t.Errorf("%d eligible sessions survived Prune (reported %+v)", len(left), res)
	}
}
