package db

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/db/internal/forensics"
)

// The WAL's bound. A PASSIVE checkpoint copies only the frames no reader
// still needs, and SQLite starts the log over only once one has copied
// them all and no reader is left on the log. Readers that overlap — a busy
// gateway's, or the torture suite's two that each read a whole
// conversation — always hold some older snapshot, so that moment never
// comes and the log grows with every commit, without limit: a 9-minute
// torture run left a 15 GB WAL beside a 70 MB database, which every reader
// and any recovery after a crash must walk.
//
// So once the log has outgrown walBoundBytes, a RESTART checkpoint runs in
// the background (restartWAL): it holds the write lock (writes of every
// process wait; reads go on) while the readers in flight finish, copies
// every frame, and makes sure the next write starts the log over;
// journal_size_limit then trims the file. It is never TRUNCATE, which
// shrinks the file under live readers of other processes, and this SQLite
// (3.54) has the WAL-reset fix of 3.51.3. This is the one exception to
// "PASSIVE only" (DESIGN.md): without it the WAL has no bound at all.
//
// How long it may wait for readers follows them: from walRestartWaitMin
// (doubled for each further bound the log has grown past, so a process
// that just started still stops the growth), doubling each time the
// readers outlast it, up to walRestartWaitMax, and halving after each
// success, so it settles near the length of the reads in flight. After
// the wait it still copies what PASSIVE could not, which no timeout cuts
// short. A try the readers outlast is not an error; the next waits ten
// times as long as it did (walRestartBackoff to walRestartBackoffMax), so
// a reader that outlasts every try (a long export holds one snapshot
// throughout) costs this process's writes about a tenth of the time at
// most — each process keeps its own pace, so N writing processes can
// cost N tenths.
const (
	walBoundBytes        = 4 * journalSizeLimit
	walRestartWaitMin    = 100 * time.Millisecond
	walRestartWaitMax    = 3 * time.Second
	walRestartBackoff    = time.Second
	walRestartBackoffMax = 30 * time.Second
)

// checkpoint is the periodic post-commit checkpoint, PASSIVE. It reports
// whether the log has outgrown its bound and a restart is due: the caller
// runs it in the background (restartWAL).
//
// +checklocks:w.mu
func (w *writer) checkpoint(ctx context.Context) (restart bool, err error) {
	_, frames, err := walCheckpoint(ctx, w.conn, "PASSIVE")
	if err != nil {
		return false, err
	}
	return w.walBounds(ctx, frames) > 0 && w.restart.due(time.Now()), nil
}

// restartWAL starts over a WAL that has outgrown its bound (see
// walBoundBytes): a RESTART checkpoint that holds the write lock while it
// waits up to the pace's wait for the readers in flight, then copies what
// PASSIVE could not. It takes the writer lock itself; maintain runs it in
// the background (one at a time), so no caller waits for it except
// through the lock.
func (w *writer) restartWAL() error {
	w.mu.Lock()
	defer w.unlock()
	ctx, cancel := context.WithTimeout(context.Background(), walRestartWaitMax+time.Second)
	defer cancel()
	if ok, err := w.maintainable(ctx); !ok {
		return err
	}
	// Measured again under the lock: another process may have started
	// the log over meanwhile.
	_, frames, err := walCheckpoint(ctx, w.conn, "PASSIVE")
	bounds := w.walBounds(ctx, frames)
	if err != nil || bounds == 0 {
		return w.haltOnSyncFailure(err) // under the lock, as maintenance
	}
	wait := w.restart.waitFor(bounds)
	// The busy timeout is how long the RESTART holds the write lock
	// waiting for readers; the writer's own comes back however it ends.
	// These PRAGMAs go to the connection, not the statement cache: each
	// wait is another text, and a PRAGMA is compiled on every run anyway.
	// The context outlives the longest wait; maintenance's 1 s would
	// interrupt it.
	defer w.restoreBusyTimeout() // even if setting it reports an error after taking effect
	if err := setBusyTimeout(ctx, w.conn, wait); err != nil {
		return err
	}
	busy, frames, err := walCheckpoint(ctx, w.conn, "RESTART")
	if err == nil && !busy {
		w.walRestarts.Add(1)
		w.restart.succeeded(wait)
		return nil
	}
	// Outlasted, or failed: either way the next try waits, so a restart
	// that cannot succeed does not hold writes off at every checkpoint.
	retryIn := w.restart.outlasted(wait, time.Now())
	if err != nil && !isLockError(err) {
		return w.haltOnSyncFailure(fmt.Errorf("restart WAL: %w", err))
	}
	w.noteOutlasted(frames, wait)
	w.log.Debug("sessiondb: readers outlasted a WAL restart; it is retried later",
		"path", w.path, "frames", frames, "waited", wait, "retry_in", retryIn)
	return nil
}

// restoreBusyTimeout gives the writer its own busy timeout back.
//
// +checklocks:w.mu
func (w *writer) restoreBusyTimeout() {
	if err := setBusyTimeout(context.Background(), w.conn, busyTimeout[kindWriter]); err != nil {
		w.log.Warn("sessiondb: restoring the writer's busy timeout failed; its lock waits end sooner", "path", w.path, "err", err)
	}
}

// restartPace is how long a WAL restart may wait for readers and when the
// next may run (see walBoundBytes).
type restartPace struct {
	wait    time.Duration // learned from the readers: what the last try needed
	backoff time.Duration // the pause after the last outlasted try
	next    time.Time     // no try before this
}

func (p *restartPace) due(now time.Time) bool { return !now.Before(p.next) }

// waitFor is the next try's wait with the log at bounds (≥ 1) times the
// bound: what was learned, but at least walRestartWaitMin doubled for each
// further bound, so a writer that has not learned the readers' pace yet (a
// process that just started) still stops the growth.
func (p *restartPace) waitFor(bounds int64) time.Duration {
	floor := walRestartWaitMin << min(max(bounds-1, 0), 5)
	return min(max(p.wait, floor), walRestartWaitMax)
}

// succeeded halves the wait: the readers may have become quicker.
func (p *restartPace) succeeded(wait time.Duration) {
	p.wait, p.backoff, p.next = wait/2, 0, time.Time{}
}

// outlasted doubles the wait and pauses ten times the wait just spent
// (from walRestartBackoff up to walRestartBackoffMax) before the next try,
// so tries the readers outlast hold this process's writes off for at most
// about a tenth of the time; it returns the pause.
func (p *restartPace) outlasted(wait time.Duration, now time.Time) time.Duration {
	p.backoff = min(max(10*wait, walRestartBackoff), walRestartBackoffMax)
	p.wait = min(2*wait, walRestartWaitMax)
	p.next = now.Add(p.backoff)
	return p.backoff
}

// walBounds is how many times the writer's bound a log of frames frames
// holds: 0 while it is within the bound. The page size is read once: a
// WAL file keeps its page size (VACUUM cannot change it in WAL mode).
//
// +checklocks:w.mu
func (w *writer) walBounds(ctx context.Context, frames int64) int64 {
	if w.pageSize == 0 {
		// Hand-written: sqlc cannot express PRAGMAs.
		if err := w.conn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&w.pageSize); err != nil {
			return 0 // the next checkpoint asks again
		}
	}
	bytes := frames * (w.pageSize + forensics.WALFrameHeaderBytes)
	if bytes <= w.walBound {
		return 0
	}
	return bytes / w.walBound
}

// walCheckpoint runs a checkpoint in mode (PASSIVE or RESTART) and returns
// whether it was blocked from finishing (RESTART waits for readers; SQLite
// reports running out of that patience in the result row, not as an error)
// and the number of frames in the log.
// Hand-written: sqlc cannot express PRAGMAs.
func walCheckpoint(ctx context.Context, q gen.DBTX, mode string) (busy bool, frames int64, err error) {
	var copied int64
	err = q.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &copied)
	return busy, frames, err
}

// setBusyTimeout sets how long q's connection waits for another's lock.
// Hand-written: sqlc cannot express PRAGMAs.
func setBusyTimeout(ctx context.Context, q gen.DBTX, d time.Duration) error {
	_, err := q.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.FormatInt(d.Milliseconds(), 10))
	return err
}
