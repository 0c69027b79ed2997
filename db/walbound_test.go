package db

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"log/slog"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// walFrames reads mxFrame, the number of frames in the WAL's current
// generation, from the wal-index header in the -shm file (offset 16,
// native byte order: little-endian on every platform CI runs). It is the
// size of the log a reader would have to consult, which is what must stay
// bounded; the -wal file itself is only trimmed once the log restarts.
func walFrames(t testing.TB, path string) uint32 {
	t.Helper()
	b, err := os.ReadFile(path + "-shm")
	if err != nil {
		t.Fatalf("read -shm: %v", err)
	}
	if len(b) < 20 {
		t.Fatalf("-shm is %d bytes", len(b))
	}
	return binary.LittleEndian.Uint32(b[16:20])
}

// holdSnapshots keeps a read snapshot open on the file at every moment, as
// a busy gateway's readers do: two read-only connections take turns, each
// starting a read transaction just before the other ends its own, so each
// read lasts about hold. So a PASSIVE checkpoint never copies the whole log
// and the writer can never start it over. It returns once the first
// snapshot is held and stops when the test ends.
func holdSnapshots(t *testing.T, path string, hold time.Duration) {
	t.Helper()
	pool, err := openDB(path, kindReader, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var conns [2]*sql.Conn
	for i := range conns {
		if conns[i], err = pool.Conn(ctx); err != nil {
			t.Fatal(err)
		}
	}
	begin := func(c *sql.Conn) error {
		//sessiondb:allow txonly -- a reader's snapshot, held on purpose
		if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
			return err
		}
		var n int64
		return c.QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&n)
	}
	end := func(c *sql.Conn) {
		//sessiondb:allow txonly -- ends the reader's snapshot
		c.ExecContext(context.Background(), "ROLLBACK")
	}
	if err := begin(conns[0]); err != nil {
		t.Fatalf("reader snapshot: %v", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; ctx.Err() == nil; i++ {
			next, prev := conns[i%2], conns[(i+1)%2]
			for begin(next) != nil && ctx.Err() == nil { // never a moment without a snapshot
				end(next)
			}
			end(prev)
			select {
			case <-ctx.Done():
			case <-time.After(hold):
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, c := range conns {
			end(c)
			c.Close()
		}
		pool.Close()
	})
}

// appendWords appends messages of about 1 KB to session "s" until n are
// appended or, with n < 0, until done reports true. It returns how many it
// appended, the largest log (in frames) seen after any of them, and how
// many times the log started over (its frame count fell); done is told
// that count.
func appendWords(t *testing.T, s *Store, n int, done func(resets int) bool) (appended int, peak uint32, resets int) {
	t.Helper()
	var last uint32
	for ; appended != n && (done == nil || !done(resets)); appended++ {
		m := NewMessage{Role: "user", Content: strings.Repeat("word ", 200) + strconv.Itoa(appended)}
		if _, err := s.AppendMessage(t.Context(), "s", m); err != nil {
			t.Fatalf("append %d: %v", appended, err)
		}
		f := walFrames(t, s.Path())
		if f < last {
			resets++
		}
		last, peak = f, max(peak, f)
	}
	return appended, peak, resets
}

// wantWriterBusyTimeout fails the test unless the writer connection has
// its own busy timeout back (a RESTART lowers it while it waits). Reading
// it takes the writer lock, so a restart in flight finishes first.
func wantWriterBusyTimeout(t *testing.T, s *Store) {
	t.Helper()
	var ms int64
	err := s.w.read(t.Context(), func(q genDBTX) error {
		return q.QueryRowContext(t.Context(), "PRAGMA busy_timeout").Scan(&ms)
	})
	if want := busyTimeout[kindWriter].Milliseconds(); err != nil || ms != want {
		t.Errorf("writer busy_timeout = %d ms (%v); want its own %d ms back", ms, err, want)
	}
}

// debugLogs makes a logger that keeps debug lines for the test to count.
func debugLogs() (*slog.Logger, *syncBuffer) {
	var b syncBuffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &b
}

const (
	testBound = 1 << 20 // 254 frames of 4 KiB
	testEvery = 10      // commits between checkpoints
	// The log may pass the bound by one checkpoint interval: each of
	// these ~1 KB appends writes about 21 frames (message, indexes,
	// session, queue, full-text pages).
	testSlack = testEvery * 30 * 4120
)

// TestWAL_BoundedUnderContinuousReaders: with a read snapshot always open,
// PASSIVE checkpoints never finish and the log grows with every commit;
// past its bound the writer waits (briefly) for the readers to move on and
// starts the log over, so it stays near the bound. The unbounded row shows
// the growth the bound prevents (and that the test can fail).
func TestWAL_BoundedUnderContinuousReaders(t *testing.T) {
	for _, tc := range []struct {
		name      string
		bound     int64
		wantPeak  func(frames uint32, outlasted uint64) bool
		wantReset bool
	}{
		// Each restart the readers outlast (a loaded machine stretching
		// their 20 ms reads past the writer's wait) lets the log grow by
		// another interval before the next try, as designed (walpin.go):
		// Stats counts them, and most tries must still succeed.
		{"bounded", testBound, func(f uint32, outlasted uint64) bool {
			return int64(f)*4120 <= testBound+testSlack*(1+int64(outlasted))
		}, true},
		// Without the bound the log still starts over now and then, when
		// the writer pauses (a loaded machine, -race) longer than a read,
		// so both readers take snapshots of a fully copied log; it grows
		// past 20 MB on a quiet machine.
		{"unbounded", math.MaxInt64, func(f uint32, _ uint64) bool { return int64(f)*4120 > 4*testBound }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTestStore(t, Options{CheckpointEvery: testEvery, walBound: tc.bound})
			newTestSession(t, s, "s")
			holdSnapshots(t, s.Path(), 20*time.Millisecond)

			_, peak, resets := appendWords(t, s, 400, nil)
			st := s.Stats()
			t.Logf("peak log %d frames (%d KiB), %d restarts, %d outlasted, %d resets",
				peak, int64(peak)*4120>>10, st.WALRestarts, st.WALRestartsOutlasted, resets)
			if !tc.wantPeak(peak, st.WALRestartsOutlasted) {
				t.Errorf("peak log %d frames against a bound of %d bytes (%d restarts outlasted)", peak, tc.bound, st.WALRestartsOutlasted)
			}
			if tc.wantReset && st.WALRestartsOutlasted >= st.WALRestarts {
				t.Errorf("%d restarts outlasted, %d succeeded: the writer's wait does not cover 20 ms reads", st.WALRestartsOutlasted, st.WALRestarts)
			}
			if got := st.WALRestarts > 0 && resets > 0; got != tc.wantReset {
				t.Errorf("WALRestarts = %d, log resets = %d; want restarts: %v", st.WALRestarts, resets, tc.wantReset)
			}
			if st.MaintenanceFailures != 0 {
				t.Errorf("MaintenanceFailures = %d", st.MaintenanceFailures)
			}
			wantWriterBusyTimeout(t, s)
			ms, err := s.Messages(t.Context(), "s", MessageQuery{})
			if err != nil || len(ms) != 400 {
				t.Fatalf("Messages: %d, %v; want all 400", len(ms), err)
			}
		})
	}
}

// TestWAL_RestartWaitFollowsLongReads: readers that each hold a snapshot
// for over a second outlast the first, 100 ms, restart; the next try,
// with the log now many times past the bound, may wait long enough to
// cover the reads in flight — past the maintenance step's own 1 s
// timeout, which must not cut it short — and the log starts over. (How
// the wait doubles and halves with the readers: TestRestartPace.)
func TestWAL_RestartWaitFollowsLongReads(t *testing.T) {
	logger, logs := debugLogs()
	s := openTestStore(t, Options{CheckpointEvery: testEvery, walBound: testBound, Logger: logger})
	newTestSession(t, s, "s")
	holdSnapshots(t, s.Path(), 1100*time.Millisecond)

	deadline := time.Now().Add(30 * time.Second)
	n, _, resets := appendWords(t, s, -1, func(resets int) bool {
		return resets >= 1 || time.Now().After(deadline)
	})
	outlasted := strings.Count(logs.String(), "readers outlasted a WAL restart")
	st := s.Stats()
	t.Logf("%d appends, %d outlasted tries, %d restarts, %d log resets", n, outlasted, st.WALRestarts, resets)
	if st.WALRestarts < 1 || resets < 1 || st.MaintenanceFailures != 0 {
		t.Errorf("in 30 s: WALRestarts = %d, log resets = %d, MaintenanceFailures = %d; want restarts, resets, no failures",
			st.WALRestarts, resets, st.MaintenanceFailures)
	}
	if outlasted == 0 {
		t.Errorf("no try was outlasted: the readers did not hold their snapshots long enough to test the wait")
	}
}

// TestWAL_RestartBacksOffFromALongReader: a reader that keeps one snapshot
// for the whole run (a long export) outlasts every RESTART. Each try holds
// the write lock, so tries pause between them instead of running at every
// checkpoint. Once the reader ends, PASSIVE copies the whole log and the
// next write starts it over by itself.
func TestWAL_RestartBacksOffFromALongReader(t *testing.T) {
	logger, logs := debugLogs()
	s := openTestStore(t, Options{CheckpointEvery: testEvery, walBound: testBound, Logger: logger})
	newTestSession(t, s, "s")
	pool, err := openDB(s.Path(), kindReader, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	reader, err := pool.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	//sessiondb:allow txonly -- the long reader's one snapshot
	if _, err := reader.ExecContext(t.Context(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := reader.QueryRowContext(t.Context(), "SELECT count(*) FROM messages").Scan(&n); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	stop := start.Add(2500 * time.Millisecond)
	appendWords(t, s, -1, func(int) bool { return time.Now().After(stop) })
	elapsed := time.Since(start)
	tries := strings.Count(logs.String(), "readers outlasted a WAL restart")
	// The first try, then at most one per walRestartBackoff.
	if most := int(elapsed/walRestartBackoff) + 1; tries < 2 || tries > most {
		t.Errorf("%d outlasted restarts in %v; want 2..%d", tries, elapsed, most)
	}
	// Each pause is ten times the wait the readers outlasted.
	for _, m := range regexp.MustCompile(`waited=(\S+) retry_in=(\S+)`).FindAllStringSubmatch(logs.String(), -1) {
		waited, err1 := time.ParseDuration(m[1])
		pause, err2 := time.ParseDuration(m[2])
		if want := min(max(10*waited, walRestartBackoff), walRestartBackoffMax); err1 != nil || err2 != nil || pause != want {
			t.Errorf("waited %s, then paused %s; want %v", m[1], m[2], want)
		}
	}
	if st := s.Stats(); st.WALRestarts != 0 || st.MaintenanceFailures != 0 {
		t.Errorf("with the reader: WALRestarts = %d, MaintenanceFailures = %d; want 0, 0", st.WALRestarts, st.MaintenanceFailures)
	}
	wantWriterBusyTimeout(t, s)

	//sessiondb:allow txonly -- the long reader ends
	if _, err := reader.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if _, _, resets := appendWords(t, s, 2*testEvery, nil); resets == 0 {
		t.Errorf("after the reader ended: the log did not start over in %d appends (%d frames)", 2*testEvery, walFrames(t, s.Path()))
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	// +checklocks:mu
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRestartPace: how long a WAL restart may wait and when the next may
// run, step by step: the wait starts at 100 ms (doubled for each further
// bound the log has grown past), doubles when readers outlast it, halves
// after a success; the pause after an outlasted try is ten times its wait,
// from 1 s up to 30 s.
func TestRestartPace(t *testing.T) {
	type step struct {
		bounds    int64
		outlasted bool          // else it succeeds
		wantWait  time.Duration // the try's wait
		wantPause time.Duration // the pause after it (0 after a success)
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"learns the readers' pace", []step{
			{1, true, 100 * time.Millisecond, time.Second},
			{1, true, 200 * time.Millisecond, 2 * time.Second},
			{1, true, 400 * time.Millisecond, 4 * time.Second},
			{1, false, 800 * time.Millisecond, 0},
			{1, false, 400 * time.Millisecond, 0},
			{1, false, 200 * time.Millisecond, 0},
			{1, false, 100 * time.Millisecond, 0},
			{1, false, 100 * time.Millisecond, 0},
		}},
		{"further past the bound waits longer", []step{
			{2, true, 200 * time.Millisecond, 2 * time.Second},
			{1, false, 400 * time.Millisecond, 0},
			{4, false, 800 * time.Millisecond, 0},
			{6, false, 3 * time.Second, 0},
			{100, false, 3 * time.Second, 0},
		}},
		{"a reader that outlasts every try", []step{
			{1, true, 100 * time.Millisecond, time.Second},
			{1, true, 200 * time.Millisecond, 2 * time.Second},
			{1, true, 400 * time.Millisecond, 4 * time.Second},
			{1, true, 800 * time.Millisecond, 8 * time.Second},
			{1, true, 1600 * time.Millisecond, 16 * time.Second},
			{1, true, 3 * time.Second, 30 * time.Second},
			{1, true, 3 * time.Second, 30 * time.Second},
			{1, false, 3 * time.Second, 0},
			{1, false, 1500 * time.Millisecond, 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p restartPace
			now := time.Unix(1e9, 0)
			for i, s := range tc.steps {
				if !p.due(now) {
					t.Fatalf("step %d: not due at %v (next %v)", i, now, p.next)
				}
				wait := p.waitFor(s.bounds)
				if wait != s.wantWait {
					t.Errorf("step %d: wait %v, want %v", i, wait, s.wantWait)
				}
				pause := time.Duration(0)
				if s.outlasted {
					pause = p.outlasted(wait, now)
				} else {
					p.succeeded(wait)
				}
				if pause != s.wantPause {
					t.Errorf("step %d: pause %v, want %v", i, pause, s.wantPause)
				}
				if pause > 0 && p.due(now.Add(pause-time.Millisecond)) {
					t.Errorf("step %d: due again before its %v pause ended", i, pause)
				}
				now = now.Add(pause)
			}
		})
	}
}
