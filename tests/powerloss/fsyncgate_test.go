package powerloss

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// The fsyncgate sequence, on any writer that checkpoints every second
// write: a PASSIVE checkpoint that a reader holds short copies frames into
// the main file without syncing it; the next complete checkpoint's fsync
// fails and drops those pages; a writer that goes on lets the checkpoint
// after it start past them, succeed and restart the log — at the next
// crash the pages are in neither file.
type fsyncgate struct {
	disk *Disk
	// write makes one acknowledged write of a big row (overflow pages:
	// written once, never rewritten) and, every second call, checkpoints.
	write func() error
	// hold opens a read snapshot on another connection; end releases it.
	hold func() (end func(), err error)
}

// run plays the sequence up to the failed fsync, then tries more writes
// and returns their errors (nil: acknowledged).
func (g fsyncgate) run(t *testing.T, after int) []error {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Until a complete checkpoint synced the main file: the log is fully
	// copied, and the next write is the first of a pair.
	for syncs, i := g.disk.Calls(Sync, Main), 0; g.disk.Calls(Sync, Main) == syncs; i++ {
		if i == 6 {
			t.Fatal("no checkpoint synced the main file")
		}
		must(g.write())
	}
	must(g.write()) // first of a pair: no checkpoint, its frames stay in the log
	end, err := g.hold()
	must(err)
	writes, syncs := g.disk.Calls(Write, Main), g.disk.Calls(Sync, Main)
	must(g.write()) // second: a checkpoint the reader holds short
	if g.disk.Calls(Write, Main) == writes || g.disk.Calls(Sync, Main) != syncs {
		t.Fatalf("the held checkpoint should copy frames without a sync: main writes %d→%d, syncs %d→%d",
			writes, g.disk.Calls(Write, Main), syncs, g.disk.Calls(Sync, Main))
	}
	end()
	g.disk.Inject(Fault{Kind: EIO, Call: Sync, Target: Main, At: g.disk.Calls(Sync, Main) + 1})
	must(g.write())
	must(g.write()) // its complete checkpoint: the fsync fails
	if g.disk.SyncFailures() != 1 {
		t.Fatalf("the complete checkpoint did not reach its fsync (%d failed)", g.disk.SyncFailures())
	}
	var errs []error
	for range after {
		errs = append(errs, g.write())
	}
	return errs
}

// bigRow is a row's content: past a page, so it lives in overflow pages.
func bigRow(key string) string { return key + strings.Repeat(" "+key, 12_000/len(key)) }

// TestFaults_FsyncFailureHaltsWrites: after a checkpoint's fsync fails,
// the store acknowledges nothing more until it is reopened, so the crash
// that follows loses nothing acknowledged; once reopened, it writes again
// and verifies. Without the halt the same sequence acknowledges eight
// more writes and the crash leaves acknowledged messages unreadable.
func TestFaults_FsyncFailureHaltsWrites(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	disk := New(false)
	defer disk.Close()
	s, err := db.Open(ctx, path, db.Options{VFS: disk.Name(), CheckpointEvery: 2, FTSMergeEvery: -1, ManualIndexing: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "p", Source: "fsyncgate"}); err != nil {
		t.Fatal(err)
	}
	acked := map[string]string{}
	n := 0
	g := fsyncgate{disk: disk,
		write: func() error {
			key := fmt.Sprintf("m%d", n)
			n++
			_, err := s.AppendMessage(ctx, "p", db.NewMessage{Role: db.RoleUser, Content: bigRow(key), IdempotencyKey: key})
			if err == nil {
				acked[key] = bigRow(key)
			}
			return err
		},
		hold: func() (func(), error) { return holdSnapshot(ctx, path, disk.Name(), "SELECT count(*) FROM messages") },
	}
	errs := g.run(t, 8)
	ackedAfter := 0
	for i, err := range errs {
		if err == nil {
			ackedAfter++
			t.Errorf("write %d after the failed fsync was acknowledged", i+1)
		} else if !errors.Is(err, db.ErrIO) {
			t.Errorf("write %d after the failed fsync: %v, want ErrIO (halted)", i+1, err)
		}
	}
	t.Logf("acknowledged %d writes, %d of the %d tried after the failed fsync (the first one's error: %v)", len(acked), ackedAfter, len(errs), errs[0])
	s.Close()

	if _, err := disk.Restore(rand.New(rand.NewPCG(1, 1)), 0, false); err != nil { // a crash: nothing unsynced survives
		t.Fatal(err)
	}
	report, err := db.Verify(ctx, path)
	if err != nil || report.Health != db.HealthVerified {
		t.Errorf("after the crash: Verify = %v %v %v", report.Health, report.Details, err)
	}
	if c := checkAcked(ctx, path, acked, nil); c != (ackCheck{}) {
		t.Errorf("after the crash: %d of %d acknowledged messages lost or damaged, %d doubled, %d counters wrong",
			c.lost, len(acked), c.dup, c.badCounters)
	}
	// The fault has cleared: a reopened store writes again.
	again, err := db.Open(ctx, path, db.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.AppendMessage(ctx, "p", db.NewMessage{Role: db.RoleUser, Content: "after", IdempotencyKey: "after"}); err != nil {
		t.Errorf("a reopened store does not write: %v", err)
	}
	again.Close()
	if report, err := db.Verify(ctx, path); err != nil || report.Health != db.HealthVerified {
		t.Errorf("after the reopen: Verify = %v %v %v", report.Health, report.Details, err)
	}
}

// TestFaults_SQLiteAloneLosesRows plays the same sequence on plain SQLite
// (synchronous=FULL, every checkpoint's error ignored as SQLite's own
// automatic checkpoint does): the connection stays usable after the failed
// fsync, and the crash loses acknowledged rows. It is the proof that the
// fault model bites, and the reason for the store's halt.
func TestFaults_SQLiteAloneLosesRows(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "plain.db")
	disk := New(false)
	defer disk.Close()
	q := url.Values{"vfs": {disk.Name()}, "_pragma": {"journal_mode(wal)", "synchronous(full)", "wal_autocheckpoint(0)"}}
	//sessiondb:allow rawopen -- plain SQLite without the store is what this test measures
	w, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.ExecContext(ctx, "CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	acked := map[string]string{}
	n := 0
	g := fsyncgate{disk: disk,
		write: func() error {
			key := fmt.Sprintf("r%d", n)
			n++
			if _, err := w.ExecContext(ctx, "INSERT INTO t (k, v) VALUES (?, ?)", key, bigRow(key)); err != nil {
				return err
			}
			acked[key] = bigRow(key)
			if n%2 == 0 {
				_, _ = w.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
			}
			return nil
		},
		hold: func() (func(), error) { return holdSnapshot(ctx, path, disk.Name(), "SELECT count(*) FROM t") },
	}
	for i, err := range g.run(t, 8) {
		if err != nil {
			t.Fatalf("write %d after the failed fsync: %v (SQLite was expected to go on)", i+1, err)
		}
	}
	w.Close()
	if _, err := disk.Restore(rand.New(rand.NewPCG(1, 1)), 0, false); err != nil {
		t.Fatal(err)
	}
	//sessiondb:allow rawopen -- reads back what plain SQLite kept
	r, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lost := 0
	for key, want := range acked {
		var got string
		if err := r.QueryRowContext(ctx, "SELECT v FROM t WHERE k = ?", key).Scan(&got); err != nil || got != want {
			lost++
		}
	}
	var integrity string
	_ = r.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&integrity)
	t.Logf("plain SQLite after a failed fsync and a crash: %d of %d acknowledged rows lost or damaged; integrity_check: %.80s", lost, len(acked), integrity)
	if lost == 0 && integrity == "ok" {
		t.Error("plain SQLite lost nothing: the fault model does not reproduce fsyncgate, so TestFaults_FsyncFailureHaltsWrites proves nothing")
	}
}

// holdSnapshot opens a read transaction on its own connection through
// the disk and keeps it until end is called: a reader of another process
// in the middle of a long read.
func holdSnapshot(ctx context.Context, path, vfsName, query string) (end func(), err error) {
	q := url.Values{"vfs": {vfsName}, "mode": {"ro"}}
	//sessiondb:allow rawopen -- plays another process's reader holding a snapshot
	d, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	tx, err := d.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err == nil {
		var n int
		err = tx.QueryRowContext(ctx, query).Scan(&n)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return func() { tx.Rollback(); d.Close() }, nil
}

// TestFaults_AutomaticCheckpointFailureHalts: with the store's own
// checkpoints off, SQLite's automatic one (every 1000 pages of log) runs
// inside a commit and ignores its errors; the store's WAL hook runs it
// instead and halts on a failed fsync. The commit that ran it was durable
// before the checkpoint started and is acknowledged; nothing after it is.
func TestFaults_AutomaticCheckpointFailureHalts(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	disk := New(false)
	defer disk.Close()
	s, err := db.Open(ctx, path, db.Options{VFS: disk.Name(), CheckpointEvery: -1, FTSMergeEvery: -1, ManualIndexing: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "p", Source: "autocheckpoint"}); err != nil {
		t.Fatal(err)
	}
	disk.Inject(Fault{Kind: EIO, Call: Sync, Target: Main, At: disk.Calls(Sync, Main) + 1})
	big := strings.Repeat("x", 64<<10) // 1000 pages of log in about 60 appends
	for i := range 200 {
		failedBefore := disk.SyncFailures() > 0
		_, err := s.AppendMessage(ctx, "p", db.NewMessage{Role: db.RoleUser, Content: big, IdempotencyKey: fmt.Sprint(i)})
		switch {
		case !failedBefore && err != nil:
			t.Fatalf("append %d before any fault: %v", i, err)
		case !failedBefore:
		case err == nil:
			t.Fatalf("append %d after the automatic checkpoint's fsync failed was acknowledged", i)
		case !errors.Is(err, db.ErrIO):
			t.Fatalf("append %d after the failed fsync: %v, want ErrIO", i, err)
		default:
			t.Logf("the automatic checkpoint's fsync failed after %d appends; the next is refused: %v", i, err)
			return
		}
	}
	t.Fatalf("no automatic checkpoint reached its fsync in 200 appends (main file syncs: %d)", disk.Calls(Sync, Main))
}

// TestFaults_OpenSurvivesFailedSync fails, one at a time, every fsync
// an Open of a new file makes (the switch to WAL, the migrations, the
// stamp checkpoint), then crashes. Open either fails, or succeeds — in WAL
// mode, not fallen back to a rollback journal as if the filesystem had
// refused WAL — only over writes it made durable again itself (goose retries its version
// table's transaction, and SQLite rewrites the log from the same frame):
// what the opened store then acknowledges survives the crash. Once the
// fault clears, the file opens, writes and verifies.
func TestFaults_OpenSurvivesFailedSync(t *testing.T) {
	ctx := t.Context()
	count := New(false)
	s, err := db.Open(ctx, filepath.Join(t.TempDir(), "count.db"), db.Options{VFS: count.Name(), ManualIndexing: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	count.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	failed := 0
	for _, target := range []Target{WAL, Main} {
		for at := 1; at <= count.Calls(Sync, target); at++ {
			f := Fault{Kind: EIO, Call: Sync, Target: target, At: at}
			path := filepath.Join(t.TempDir(), "state.db")
			disk := New(false)
			disk.Inject(f)
			acked := false
			if s, err := db.Open(ctx, path, db.Options{VFS: disk.Name(), ManualIndexing: true, Logger: quiet}); err != nil {
				failed++
				t.Logf("%s: Open failed: %v", f, err)
			} else {
				if _, err := os.Stat(path + "-wal"); err != nil {
					t.Errorf("%s: Open fell back to a rollback journal over a failed fsync (no WAL: %v)", f, err)
				}
				_, err := s.CreateSession(ctx, db.NewSession{ID: "p", Source: "open"})
				acked = err == nil
				s.Close()
			}
			disk.ClearFaults()
			if _, err := disk.Restore(rng, 0, false); err != nil {
				t.Fatal(err)
			}
			s, err := db.Open(ctx, path, db.Options{VFS: disk.Name(), ManualIndexing: true, Logger: quiet})
			if err != nil {
				t.Errorf("%s: reopen once the fault cleared: %v", f, err)
				disk.Close()
				continue
			}
			_, created, err := s.EnsureSession(ctx, db.NewSession{ID: "p", Source: "open"})
			if err != nil {
				t.Errorf("%s: write after the reopen: %v", f, err)
			} else if acked && created {
				t.Errorf("%s: Open succeeded over a failed fsync, and the session it acknowledged was lost at the crash", f)
			}
			s.Close()
			disk.Close()
			if report, err := db.Verify(ctx, path); err != nil || report.Health != db.HealthVerified {
				t.Errorf("%s: Verify = %v %v %v", f, report.Health, report.Details, err)
			}
		}
	}
	t.Logf("%d of %d failed fsyncs during Open failed it", failed, count.Calls(Sync, WAL)+count.Calls(Sync, Main))
}

// TestFaults_VacuumFsyncFailureHalts: Vacuum checkpoints and syncs on
// the writer too; its failed fsync halts writes like a commit's.
func TestFaults_VacuumFsyncFailureHalts(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	disk := New(false)
	defer disk.Close()
	s, err := db.Open(ctx, path, db.Options{VFS: disk.Name(), ManualIndexing: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "p", Source: "vacuum"}); err != nil {
		t.Fatal(err)
	}
	disk.Inject(Fault{Kind: EIO, Call: Sync, Target: Main, At: disk.Calls(Sync, Main) + 1})
	if _, err := s.Vacuum(ctx); !errors.Is(err, db.ErrIO) {
		t.Fatalf("Vacuum over a failed fsync = %v, want ErrIO", err)
	}
	if _, err := s.AppendMessage(ctx, "p", db.NewMessage{Role: db.RoleUser, Content: "x", IdempotencyKey: "x"}); !errors.Is(err, db.ErrIO) {
		t.Errorf("append after Vacuum's failed fsync = %v, want ErrIO (halted)", err)
	}
}

// TestFaults_OpenOverAnotherProcessesPartialCheckpoint: another process
// cut a checkpoint short (its pages in the main file, unsynced); a second
// store's Open runs the complete checkpoint, whose fsync fails. That Open
// must fail: a store opened over it would start its next checkpoint past
// the dropped pages and restart the log. The first store hears of the
// error at its own next fsync of the file (Linux reports it to every open
// file description) and halts; after a crash nothing acknowledged is lost.
func TestFaults_OpenOverAnotherProcessesPartialCheckpoint(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	disk := New(false)
	defer disk.Close()
	opts := db.Options{VFS: disk.Name(), CheckpointEvery: 2, FTSMergeEvery: -1, ManualIndexing: true, Logger: quiet}
	a, err := db.Open(ctx, path, db.Options{VFS: disk.Name(), CheckpointEvery: -1, FTSMergeEvery: -1, ManualIndexing: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.CreateSession(ctx, db.NewSession{ID: "p", Source: "two"}); err != nil {
		t.Fatal(err)
	}
	acked := map[string]string{}
	appendTo := func(s *db.Store, key string) error {
		_, err := s.AppendMessage(ctx, "p", db.NewMessage{Role: db.RoleUser, Content: bigRow(key), IdempotencyKey: key})
		if err == nil {
			acked[key] = bigRow(key)
		}
		return err
	}
	for i := range 3 {
		if err := appendTo(a, fmt.Sprint("a", i)); err != nil {
			t.Fatal(err)
		}
	}
	end, err := holdSnapshot(ctx, path, disk.Name(), "SELECT count(*) FROM messages")
	if err != nil {
		t.Fatal(err)
	}
	if err := appendTo(a, "a3"); err != nil {
		t.Fatal(err)
	}
	//sessiondb:allow rawopen -- plays another process's checkpoint
	other, err := sql.Open("sqlite3", "file:"+path+"?"+url.Values{"vfs": {disk.Name()}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	writes, syncs := disk.Calls(Write, Main), disk.Calls(Sync, Main)
	if _, err := other.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	end()
	if disk.Calls(Write, Main) == writes || disk.Calls(Sync, Main) != syncs {
		t.Fatalf("the other process's checkpoint should copy frames without a sync: main writes %d→%d, syncs %d→%d",
			writes, disk.Calls(Write, Main), syncs, disk.Calls(Sync, Main))
	}
	disk.Inject(Fault{Kind: EIO, Call: Sync, Target: Main, At: disk.Calls(Sync, Main) + 1})
	if b, err := db.Open(ctx, path, opts); err == nil {
		t.Error("Open succeeded over its checkpoint's failed fsync")
		for i := range 6 {
			_ = appendTo(b, fmt.Sprint("b", i))
		}
		b.Close()
	} else if !errors.Is(err, db.ErrIO) {
		t.Errorf("Open over a failed fsync = %v, want ErrIO", err)
	}
	disk.ClearFaults()
	for i := 4; i < 7; i++ { // the first store's commits sync the WAL only
		if err := appendTo(a, fmt.Sprint("a", i)); err != nil {
			t.Errorf("append to the first store: %v", err)
		}
	}
	a.Close() // its checkpoint's fsync hears of the failure: it halts there

	if _, err := disk.Restore(rand.New(rand.NewPCG(1, 1)), 0, false); err != nil {
		t.Fatal(err)
	}
	if report, err := db.Verify(ctx, path); err != nil || report.Health != db.HealthVerified {
		t.Errorf("after the crash: Verify = %v %v %v", report.Health, report.Details, err)
	}
	if c := checkAcked(ctx, path, acked, nil); c != (ackCheck{}) {
		t.Errorf("after the crash: %d of %d acknowledged messages lost or damaged, %d doubled, %d counters wrong",
			c.lost, len(acked), c.dup, c.badCounters)
	}
}
