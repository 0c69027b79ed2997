package db

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Appends are indexed in the background, in slices of their own: the
// queue empties by itself, and the indexer's transactions are not counted
// as the callers' writes.
func TestIndexer_IndexesInTheBackground(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "b")
	const n = 120
	for i := range n {
		if _, err := s.AppendMessage(t.Context(), "b", NewMessage{Role: RoleUser, Content: fmt.Sprint("background ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Stats reads its counters and then the queue: a slice that commits
	// in between shows as neither queued nor counted. Polled until both
	// agree, as a caller reading Stats twice would see.
	st := s.Stats()
	for deadline := time.Now().Add(10 * time.Second); (st.IndexQueued > 0 || st.MessagesIndexed < n) && time.Now().Before(deadline); st = s.Stats() {
		time.Sleep(10 * time.Millisecond)
	}
	if st.IndexQueued != 0 || st.MessagesIndexed != n || st.IndexSlices == 0 {
		t.Errorf("after 10 s: %d queued, %d indexed in %d slices; want 0, %d, at least 1", st.IndexQueued, st.MessagesIndexed, st.IndexSlices, n)
	}
	if st.WritesCommitted != n+1 { // the session and the appends
		t.Errorf("WritesCommitted %d, want %d (index slices are not writes)", st.WritesCommitted, n+1)
	}
	ftsConsistent(t, s)
}

// Stats reports the queue and how long its oldest row has waited.
func TestStats_IndexQueueAndLag(t *testing.T) {
	s := openTestStore(t, Options{})
	s.w.ix.paused.Store(true)
	newTestSession(t, s, "l")
	for i := range 3 {
		if _, err := s.AppendMessage(t.Context(), "l", NewMessage{Role: RoleUser, Content: fmt.Sprint("lag ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(60 * time.Millisecond)
	if st := s.Stats(); st.IndexQueued != 3 || st.IndexLag < 50*time.Millisecond || st.IndexLag > time.Minute {
		t.Errorf("Stats: %d queued, lag %v; want 3 queued and a lag of 60 ms or so", st.IndexQueued, st.IndexLag)
	}
	indexNow(t, s)
	if st := s.Stats(); st.IndexQueued != 0 || st.IndexLag != 0 || st.MessagesIndexed != 3 {
		t.Errorf("after IndexNow: %d queued, lag %v, %d indexed; want 0, 0, 3", st.IndexQueued, st.IndexLag, st.MessagesIndexed)
	}
}

// The slice size follows the measured cost of a row, grows while the
// indexer is behind, and stays within its bounds.
func TestIndexer_SliceLimit(t *testing.T) {
	for _, tc := range []struct {
		perRow time.Duration
		lag    time.Duration
		want   int
	}{
		{0, 0, indexMinSlice},                                // nothing measured yet
		{100 * time.Microsecond, 0, 40},                      // 4 ms / 100 µs
		{100 * time.Microsecond, 40 * time.Millisecond, 40},  // not behind
		{100 * time.Microsecond, 100 * time.Millisecond, 80}, // twice the lag bound: twice the budget
		{100 * time.Microsecond, 10 * time.Second, 240},      // at most 24 ms
		{time.Millisecond, 0, indexMinSlice},                 // slow rows: still a useful slice
		{time.Microsecond, 10 * time.Second, indexMaxSlice},
	} {
		var w writer
		w.ix.perRowNanos.Store(int64(tc.perRow))
		if got := w.sliceLimit(tc.lag); got != tc.want {
			t.Errorf("sliceLimit(per row %v, lag %v) = %d, want %d", tc.perRow, tc.lag, got, tc.want)
		}
	}
}

// Close indexes what is queued before it closes.
func TestClose_IndexesTheQueue(t *testing.T) {
	s := openTestStore(t, Options{})
	s.w.ix.paused.Store(true)
	newTestSession(t, s, "c")
	for i := range 50 {
		if _, err := s.AppendMessage(t.Context(), "c", NewMessage{Role: RoleUser, Content: fmt.Sprint("closing ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var pending, indexed int
	if err := d.QueryRowContext(t.Context(), `SELECT (SELECT COUNT(*) FROM messages WHERE id > (SELECT indexed_through FROM fts_mark)),
		(SELECT COUNT(*) FROM messages_fts_docsize)`).Scan(&pending, &indexed); err != nil {
		t.Fatal(err)
	}
	if pending != 0 || indexed != 50 {
		t.Errorf("after Close: %d past the mark, %d indexed; want 0 and 50", pending, indexed)
	}
}

// Close that cannot index in time (another process holds the write lock
// past its budget) says so and loses nothing: the rows stay queued and
// searchable, and the next store's indexer indexes them once the lock is
// free.
func TestClose_SaysWhenItCannotIndex(t *testing.T) {
	var logs bytes.Buffer
	s := openTestStore(t, Options{Logger: testLogger(&logs)})
	s.w.ix.paused.Store(true)
	newTestSession(t, s, "c")
	if _, err := s.AppendMessage(t.Context(), "c", NewMessage{Role: RoleUser, Content: "stuck behind a lock"}); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	holdWriteLock(t, path, closeIndexBudget+time.Second)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > closeIndexBudget+10*time.Second {
		t.Errorf("Close took %v with a %v budget", took, closeIndexBudget)
	}
	if !strings.Contains(logs.String(), "close left messages queued") || !strings.Contains(logs.String(), "queued=1") {
		t.Errorf("Close did not say it left a row queued; logs:\n%s", logs.String())
	}
	s, err := Open(t.Context(), path, Options{OpenPatience: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := searchContents(t, s, "stuck lock"); len(got) != 1 {
		t.Errorf("stuck lock: %v, want the row Close left queued", got)
	}
	for deadline := time.Now().Add(10 * time.Second); queued(t, s) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := queued(t, s); n != 0 {
		t.Errorf("%d rows still queued 10 s after the next Open", n)
	}
}

// Verify, run while a store's rows wait for its indexer, counts them as
// queued, not missing.
func TestVerify_AccountsForRowsTheIndexerHasNotReached(t *testing.T) {
	s := openTestStore(t, Options{})
	s.w.ix.paused.Store(true)
	newTestSession(t, s, "v")
	for i := range 5 {
		if _, err := s.AppendMessage(t.Context(), "v", NewMessage{Role: RoleUser, Content: fmt.Sprint("verify ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := queued(t, s); n != 5 {
		t.Fatalf("%d queued, want 5", n)
	}
	r, err := Verify(t.Context(), s.Path())
	if err != nil || r.Health != HealthVerified || r.FTS != "ok" {
		t.Errorf("Verify with 5 rows queued: %s %q %v %v; want verified", r.Health, r.FTS, r.Details, err)
	}
}

// A slice that cannot get the write lock in time (another process holds
// it) is no caller's exhausted patience: nothing warns or counts it, and
// the indexer tries again once the lock is free.
func TestIndexer_WaitsOutAnotherProcessLockQuietly(t *testing.T) {
	var logs bytes.Buffer
	s := openTestStore(t, Options{Logger: testLogger(&logs)})
	newTestSession(t, s, "q")
	s.w.ix.paused.Store(true)
	if _, err := s.AppendMessage(t.Context(), "q", NewMessage{Role: RoleUser, Content: "behind a lock"}); err != nil {
		t.Fatal(err)
	}
	releasing := holdWriteLock(t, s.Path(), 2*indexPatience+500*time.Millisecond)
	s.w.ix.paused.Store(false)
	<-releasing
	for deadline := time.Now().Add(10 * time.Second); queued(t, s) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := queued(t, s); n != 0 {
		t.Errorf("%d rows still queued after the lock was released", n)
	}
	if st := s.Stats(); st.PatienceExhausted != 0 {
		t.Errorf("PatienceExhausted = %d; the indexer's waits are not a caller's", st.PatienceExhausted)
	}
	if strings.Contains(logs.String(), "write lock unavailable") {
		t.Errorf("the indexer's lock wait was logged as a write giving up:\n%s", logs.String())
	}
}

// With ManualIndexing nothing indexes in the background; Search finds the
// queued message anyway, and IndexNow empties the queue.
func TestManualIndexing(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "m")
	if _, err := s.AppendMessage(t.Context(), "m", NewMessage{Role: RoleUser, Content: "kumquat marmalade"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * indexPoll) // long past when the background indexer would have run
	if st := s.Stats(); st.IndexQueued != 1 || st.IndexSlices != 0 {
		t.Fatalf("Stats: %d queued, %d slices; want the message left queued", st.IndexQueued, st.IndexSlices)
	}
	if hits, err := s.Search(t.Context(), "kumquat", SearchOptions{}); err != nil || len(hits) != 1 {
		t.Errorf("Search of a queued message = %d hits, %v; want 1", len(hits), err)
	}
	if err := s.IndexNow(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.IndexQueued != 0 || st.MessagesIndexed != 1 {
		t.Errorf("after IndexNow: %d queued, %d indexed; want 0, 1", st.IndexQueued, st.MessagesIndexed)
	}
}

// A read-only store indexes nothing: IndexNow says why instead of panicking.
func TestIndexNow_ReadOnlyStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := Open(t.Context(), path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.IndexNow(t.Context()); !errors.Is(err, ErrReadOnly) {
		t.Errorf("IndexNow on a read-only store = %v, want ErrReadOnly", err)
	}
}

// A long backlog queued by another writer does not make Open fail: Open
// indexes what it can within part of its patience and leaves the rest to
// the background indexer.
func TestOpen_LongIndexBacklogWithShortPatience(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "b")
	s.Close()
	damage(t, path, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
		INSERT INTO messages (session_id, role, content, created_at) SELECT 'b', 'user', 'backlog row ' || i, 0 FROM n`)
	s, err = Open(t.Context(), path, Options{OpenPatience: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open behind a 40,000-row backlog with 300 ms patience: %v", err)
	}
	defer s.Close()
	if hits, err := s.Search(t.Context(), `"backlog row 39999"`, SearchOptions{}); err != nil || len(hits) == 0 {
		t.Errorf("Search behind the backlog = %d hits, %v; want the row", len(hits), err)
	}
}

// An indexer transaction commits with synchronous=NORMAL (indexsync.go)
// and leaves the connection at FULL for whatever runs on it next.
func TestIndexer_LeavesTheConnectionDurable(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "a")
	s.w.ix.paused.Store(true)
	for i := range 20 {
		if _, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: fmt.Sprint("durable ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	indexNow(t, s)
	if n := queued(t, s); n != 0 {
		t.Fatalf("%d rows still queued", n)
	}
	s.w.mu.Lock()
	var level int
	err := s.w.conn.QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&level)
	relaxed := s.w.relaxedSync
	s.w.mu.Unlock()
	if err != nil || level != 2 || relaxed {
		t.Errorf("after indexing: synchronous=%d (relaxed %v, %v), want 2 (FULL)", level, relaxed, err)
	}
}

// Only a batch of the indexer's requests alone commits relaxed: an append
// that joined an indexer's wait for the lock, or any other batch, makes
// it FULL.
func TestIndexer_SyncLevelOfABatch(t *testing.T) {
	s := openTestStore(t, Options{})
	ix, app := &request{indexing: true}, &request{}
	tests := []struct {
		name  string
		batch []*request
		want  int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{
		{"IndexerAlone", []*request{ix}, 1},
		{"IndexerThenAppend", []*request{ix, app}, 2},
		{"AppendThenIndexer", []*request{app, ix}, 2},
		{"AppendAlone", []*request{app}, 2},
		{"NoBatch", nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.w.mu.Lock()
			defer s.w.mu.Unlock()
			if err := s.w.syncLevel(tt.batch); err != nil {
				t.Fatal(err)
			}
			var level int
			if err := s.w.conn.QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&level); err != nil {
				t.Fatal(err)
			}
			if level != tt.want || s.w.relaxedSync != (tt.want == 1) {
				t.Errorf("synchronous=%d (relaxed %v), want %d", level, s.w.relaxedSync, tt.want)
			}
		})
	}
	s.w.mu.Lock()
	s.w.restoreSync()
	s.w.mu.Unlock()
}

// An index far behind — a backlog of long messages the paused indexer
// left, as a burst of agents' turns leaves one — is caught up in slices
// that alternate with the appends: an append made while the catch-up runs
// commits with most of the backlog still queued, not after all of it.
func TestIndexer_AppendsGoBetweenCatchUpSlices(t *testing.T) {
	s := openTestStore(t, Options{})
	s.w.ix.paused.Store(true)
	newTestSession(t, s, "b")
	const backlog = 4000
	turn := strings.Repeat("a long agent turn with many words to index ", 24) // ~1 KB
	for range backlog / 500 {
		batch := make([]NewMessage, 500)
		for i := range batch {
			batch[i] = NewMessage{Role: RoleUser, Content: turn}
		}
		if _, err := s.AppendMessages(t.Context(), "b", batch); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(indexMaxLag) // every queued row is overdue
	s.w.ix.paused.Store(false)
	s.w.kickIndexer()
	for deadline := time.Now().Add(30 * time.Second); s.Stats().IndexSlices == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the indexer did not start on the backlog")
		}
		time.Sleep(time.Millisecond)
	}
	for i := range 5 {
		if _, err := s.AppendMessage(t.Context(), "b", NewMessage{Role: RoleUser, Content: fmt.Sprint("meanwhile ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.IndexQueued < backlog/4 {
		t.Errorf("5 appends during the catch-up returned with %d of %d rows queued (%d slices): they waited for most of the catch-up", st.IndexQueued, backlog, st.IndexSlices)
	}
	indexNow(t, s)
	ftsConsistent(t, s)
}

// A slice is overdue indexMaxLag after its oldest row was queued, and no
// later than indexMaxLag from now: a row stamped ahead of this clock
// (another process's clock, or this one stepped back) must not make the
// indexer give way to appends until the stamp comes.
func TestIndexer_OverdueAt(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name   string
		queued time.Time
		want   time.Time
	}{
		{"JustQueued", now, now.Add(indexMaxLag)},
		{"QueuedBefore", now.Add(-time.Second), now.Add(-time.Second + indexMaxLag)},
		{"StampedAhead", now.Add(time.Hour), now.Add(indexMaxLag)},
	} {
		if got := overdueAt(tc.queued, now); !got.Equal(tc.want) {
			t.Errorf("%s: overdueAt = %v from now, want %v", tc.name, got.Sub(now), tc.want.Sub(now))
		}
	}
}

// While the disk is full (a write found no room) the background indexer
// leaves the space to the writes: it indexes nothing until a write
// commits, or until spaceShortWait has passed without one. IndexNow does
// not wait. (TestDiskFull_Append shows it on a real full disk, as root.)
func TestIndexer_StandsAsideWhileTheDiskIsFull(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "f")
	waitIndexed := func(n uint64) bool {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if s.Stats().MessagesIndexed >= n {
				return true
			}
		}
		return false
	}
	backlog := func(word string) {
		s.w.ix.paused.Store(true)
		for i := range 5 {
			appendMessage(t, s, "f", fmt.Sprint(word, " ", i))
		}
		s.w.spaceShortSince.Store(time.Now().UnixNano()) // as a write that found no room would
		s.w.ix.paused.Store(false)
		s.w.kickIndexer()
	}

	backlog("first")
	time.Sleep(3 * indexPoll)
	if n := s.Stats().MessagesIndexed; n != 0 {
		t.Fatalf("%d messages indexed while the disk was full, want 0", n)
	}
	newTestSession(t, s, "g") // a write commits: there is room again
	if !waitIndexed(5) {
		t.Fatalf("%d indexed after a write committed, want 5", s.Stats().MessagesIndexed)
	}

	backlog("second")
	time.Sleep(3 * indexPoll)
	if n := s.Stats().MessagesIndexed; n != 5 {
		t.Fatalf("%d messages indexed while the disk was full, want still 5", n)
	}
	// No write comes: after spaceShortWait the indexer tries again.
	s.w.spaceShortSince.Store(time.Now().Add(-spaceShortWait).UnixNano())
	if !waitIndexed(10) {
		t.Fatalf("%d indexed once spaceShortWait had passed, want 10", s.Stats().MessagesIndexed)
	}

	backlog("third")
	indexNow(t, s)
	if n := s.Stats().MessagesIndexed; n != 15 {
		t.Errorf("IndexNow while the disk was full indexed up to %d, want 15", n)
	}
	if s.w.standingAside(time.Now()) {
		t.Error("still standing aside after IndexNow's slices committed")
	}
}
