package db

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// a continuation whose started_at sorts before its parent (same
// millisecond with a smaller id, or clock skew) is exported first; the
// full export is then refused by Import.
func TestExportImport_ChildExportedBeforeItsParent(t *testing.T) {
	ctx := t.Context()
	a := openTestStore(t, Options{})
	newTestSession(t, a, "zparent")
	appendTexts(t, a, "zparent", "one")
	h := lockFor(t, a, "zparent")
	w, _ := a.ActiveWatermark(ctx, "zparent")
	appendTexts(t, a, "zparent", "late")
	if _, err := a.PublishCompressionChild(ctx, "zparent", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "achild"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	// Same millisecond as the parent (what a fast publish gives).
	if err := a.write(ctx, "t", "", time.Second, func(ctx context.Context, tx genDBTX) error {
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET started_at = (SELECT started_at FROM sessions WHERE id='zparent') WHERE id='achild'")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	file := exportAll(t, a)
	b := openTestStore(t, Options{})
	res, err := b.Import(ctx, bytes.NewReader(file), ImportOptions{})
	if err != nil {
		t.Fatalf("importing a full export: %v %v", err, res.Errors)
	}
	if again := exportAll(t, b); !bytes.Equal(file, again) {
		t.Errorf("round trip differs when a child is exported before its parent:\n%s\n---\n%s", file, again)
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

// Vacuum meets another connection's write lock (in this process, so
// otherOpeners does not see it): the error is not ErrLocked.
func TestVacuum_AnotherConnectionsLockIsErrLocked(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "x")
	holdWriteLock(t, s.path, 8*time.Second)
	start := time.Now()
	_, err := s.Vacuum(t.Context())
	t.Logf("vacuum after %v: %v (ErrLocked=%v)", time.Since(start).Round(time.Millisecond), err, errors.Is(err, ErrLocked))
	if err != nil && !errors.Is(err, ErrLocked) {
		t.Errorf("vacuum under a held write lock: %v, not ErrLocked", err)
	}
}
