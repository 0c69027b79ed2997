package db

// ftsindexer.go runs the background indexer: one goroutine per Store
// that indexes the queue (ftsqueue.go) in write transactions of its own,
// through the one writer (tx.go), while appends commit only their rows.
//
// It batches by time (it waits indexDelay after a commit, so that rows
// gather) and slices by size: each slice is one transaction sized to hold
// the writer for about indexSliceBudget, from the measured cost of a row,
// so that an append arriving meanwhile waits little. It yields: a slice
// starts only when no append is queued, unless a row has waited
// indexMaxLag; then it lets one batch of the queued appends commit before
// each slice, so slices and batches alternate until the index catches up.
// Rows other processes queue are found by polling every indexPoll; the
// indexer of any open store indexes whatever is queued, whoever appended
// it. While the disk is full it stands aside until a write commits
// (spaceshort.go).

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
)

// The indexer's tuning, measured (docs/PERFORMANCE.md).
const (
	indexDelay       = 20 * time.Millisecond
	indexPoll        = 100 * time.Millisecond
	indexSliceBudget = 4 * time.Millisecond
	indexMaxBudget   = 24 * time.Millisecond
	indexMinSlice    = 16
	indexMaxSlice    = 500
	indexMaxLag      = 50 * time.Millisecond
	// indexPatience bounds a slice's wait for another process's lock; the
	// next poll tries again.
	indexPatience = time.Second
	// closeIndexBudget bounds how long Close indexes what is left, and
	// openIndexBudget how long Open indexes what a previous run left.
	closeIndexBudget = 2 * time.Second
	openIndexBudget  = 2 * time.Second
	// yieldWait bounds one wait for the queued appends' batch to commit.
	yieldWait = 5 * time.Millisecond
)

// indexer is the background indexer's state, part of the writer.
type indexer struct {
	kick   chan struct{} // buffered: a commit queued rows
	stop   context.CancelFunc
	ctx    context.Context
	done   chan struct{}
	paused atomic.Bool // tests: leave the queue alone

	bulk        atomic.Int32 // bulk loads under way (ftsbulk.go)
	perRowNanos atomic.Int64 // moving average of a slice's writer time a row
	slices      atomic.Uint64
	rows        atomic.Uint64
}

// startIndexer starts the background indexer; stopIndexer ends it.
func (w *writer) startIndexer() {
	w.ix.kick = make(chan struct{}, 1)
	w.ix.done = make(chan struct{})
	w.ix.ctx, w.ix.stop = context.WithCancel(context.Background())
	go w.runIndexer()
}

func (w *writer) stopIndexer() {
	if w.ix.stop == nil {
		return
	}
	w.ix.stop()
	<-w.ix.done
}

// stopped reports whether stopIndexer ran (before startIndexer, as at
// Open, the indexer is not stopped).
func (ix *indexer) stopped() bool { return ix.ctx != nil && ix.ctx.Err() != nil }

// kickIndexer tells the indexer that a commit may have queued rows.
func (w *writer) kickIndexer() {
	select {
	case w.ix.kick <- struct{}{}:
	default: // a kick is pending
	}
}

func (w *writer) runIndexer() {
	defer close(w.ix.done)
	ctx := w.ix.ctx
	poll := time.NewTicker(indexPoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		case <-w.ix.kick:
			t := time.NewTimer(indexDelay) // let rows gather
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if w.ix.paused.Load() {
			continue
		}
		for ctx.Err() == nil && !w.ix.paused.Load() {
			n, err := w.indexOnce(ctx, true)
			if err != nil {
				w.indexFailed(err)
				break
			}
			if n == 0 {
				break
			}
		}
	}
}

// indexFailed handles a slice that failed. Nothing is lost: the rows stay
// queued and Search covers them. An index the slice found damaged is
// switched off (marked stale, the queue emptied, rebuilt at the next
// open), as a write that finds it damaged does.
func (w *writer) indexFailed(err error) {
	switch {
	case w.ix.stopped(), errors.Is(err, ErrClosed), w.halted() != nil:
		// Stopped (Close interrupts a slice in flight) or halted.
	case errors.Is(err, ErrLocked):
		w.log.Debug("sessiondb: indexing waits for another process's write lock", "path", w.path, "err", err)
	case isIndexFailure(err), errors.Is(err, errMarkMissing):
		w.ftsSwitchedOff(err)
		if err := w.write(context.Background(), indexPatience, markFTSStaleAndDropQueue); err != nil {
			w.log.Error("sessiondb: could not mark the damaged full-text index stale", "path", w.path, "err", err)
		}
	default:
		w.log.Warn("sessiondb: indexing new messages failed; they stay queued and searchable", "path", w.path, "err", err)
	}
}

// indexOnce runs one slice and returns how many rows it indexed (0: the
// queue was empty). With yield it first lets queued appends go, unless a
// row has waited indexMaxLag.
func (w *writer) indexOnce(ctx context.Context, yield bool) (int, error) {
	return w.indexUpTo(ctx, yield, indexMaxSlice)
}

// indexUpTo is indexOnce taking at most maxRows changes when it does not
// yield. A yielding slice during a bulk load (ftsbulk.go) waits until
// bulkSliceRows are queued (or the oldest has waited bulkMaxLag) and
// then takes that many: it returns 0 meanwhile.
func (w *writer) indexUpTo(ctx context.Context, yield bool, maxRows int) (int, error) {
	if err := w.halted(); err != nil {
		return 0, err // writes are halted: no slice can commit
	}
	w.mu.Lock()
	if w.conn == nil {
		w.unlock()
		return 0, ErrClosed
	}
	state, err := queries.FTSPendingState(ctx, w.tx)
	if err != nil || (state.Queued == 0 && state.Behind == 0) {
		w.unlock()
		return 0, markMissing(err)
	}
	if yield {
		// Until a row has waited indexMaxLag the slice waits while appends
		// are queued; after, it lets one batch of them go first, so that an
		// append waits for at most one slice however far behind the index
		// is. Slices back to back would hold every append until the index
		// caught up: a queued append's TryLock loses to the next slice.
		overdue := overdueAt(time.UnixMilli(state.OldestQueuedAt), time.Now())
		for once := true; w.queueLen() > 0 && (once || time.Now().Before(overdue)); once = false {
			tx := w.transactions.Load()
			w.unlock() // wakes a queued append to lead its batch
			for deadline := time.Now().Add(yieldWait); w.transactions.Load() == tx && w.queueLen() > 0 && time.Now().Before(deadline); {
				time.Sleep(100 * time.Microsecond)
			}
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			w.mu.Lock()
			if w.conn == nil {
				w.unlock()
				return 0, ErrClosed
			}
		}
	}
	bulk := yield && w.ix.bulk.Load() > 0
	if bulk && !bulkSliceDue(state.Queued, time.UnixMilli(state.OldestQueuedAt), time.Now()) {
		w.unlock()
		return 0, nil // gathering a bulk slice
	}
	if yield && w.standingAside(time.Now()) {
		// Read under the lock, after the appends this slice let go
		// first: one of them may have found the disk full.
		w.unlock()
		return 0, nil // writes go first (spaceshort.go)
	}
	limit := maxRows
	switch {
	case bulk:
		limit = bulkSliceRows
	case yield:
		limit = w.sliceLimit(time.Since(time.UnixMilli(state.OldestQueuedAt)))
	}
	var indexed int
	now := time.Now()
	r := &request{ctx: ctx, fn: indexSlice(limit, &indexed), patience: indexPatience, start: now,
		deadline: now.Add(indexPatience), done: make(chan result, 1), indexing: true, outcome: w.noteSpace}
	committed := w.runAlone(r)
	if committed > 0 && indexed > 0 {
		// Counted before the lock goes, so that Stats, read after any
		// later write, includes every slice committed before it. A
		// slice larger than a yielding one costs less a row: it would
		// make the next yielding slices too large for their budget.
		w.ix.noteSlice(indexed, time.Since(now), limit <= indexMaxSlice)
	}
	w.unlock()

	if committed > 0 {
		w.maintain(true)
	}
	res := <-r.done
	if res.panicked != nil {
		// Never expected: the slice runs only SQL, and the driver's panics
		// halt in runCallbacks. Retried, it would panic again on every
		// poll and every open: writes halt instead.
		return 0, w.stop(fmt.Errorf("%w: indexing new messages panicked (%v); writes are halted until the store is reopened", ErrInternal, res.panicked))
	}
	if res.err != nil {
		return 0, res.err
	}
	return indexed, nil
}

// noteSlice counts a committed slice of n rows that held the writer for
// held and, with average, updates the moving average of a row's cost.
func (ix *indexer) noteSlice(n int, held time.Duration, average bool) {
	ix.slices.Add(1)
	ix.rows.Add(uint64(n))
	if !average {
		return
	}
	perRow := int64(held) / int64(n)
	if old := ix.perRowNanos.Load(); old > 0 {
		perRow = (3*old + perRow) / 4
	}
	ix.perRowNanos.Store(perRow)
}

// overdueAt is when a slice stops waiting for queued appends: indexMaxLag
// after its oldest row was queued, and no later than indexMaxLag from now.
// The queue time may be another clock's (the process that appended, or
// this one stepped back): a row stamped ahead would otherwise make the
// indexer give way to appends until the stamp came, and the index would
// stop advancing under steady load.
func overdueAt(queued, now time.Time) time.Time {
	return minTime(queued, now).Add(indexMaxLag)
}

// sliceLimit is how many rows a slice takes: about indexSliceBudget of
// writer time at the measured cost of a row, and more while the indexer
// falls behind (lag past indexMaxLag: the appends queue rows faster than
// slices of that size index them), up to indexMaxBudget — larger slices
// also cost less a row.
func (w *writer) sliceLimit(lag time.Duration) int {
	perRow := w.ix.perRowNanos.Load()
	if perRow <= 0 {
		return indexMinSlice
	}
	budget := indexSliceBudget
	if lag > indexMaxLag {
		budget = min(time.Duration(float64(budget)*float64(lag)/float64(indexMaxLag)), indexMaxBudget)
	}
	return int(min(max(int64(budget)/perRow, indexMinSlice), indexMaxSlice))
}

// indexAll indexes the queue until it is empty or ctx ends, without
// yielding, and returns how many rows are left.
// A slice that finds the index damaged switches it off (indexFailed).
func (w *writer) indexAll(ctx context.Context) (left int64, err error) {
	for {
		n, ierr := w.indexOnce(ctx, false)
		if ierr != nil {
			w.indexFailed(ierr)
			err = ierr
			break
		}
		if n == 0 {
			return 0, nil
		}
	}
	rerr := w.read(context.Background(), func(q gen.DBTX) error {
		state, err := queries.FTSPendingState(context.Background(), q)
		left = state.Queued
		return err
	})
	return left, errors.Join(err, rerr)
}

// IndexNow indexes every message still queued for the full-text indexes,
// in this process and whoever appended them, and returns once the queue
// is empty. The background indexer does it within a fraction of a second
// anyway, and Search finds queued messages all the same; IndexNow is for
// a caller that wants what it just wrote ranked by relevance (queued
// messages come first, unranked: see SortRelevance). It returns ctx's
// error, or another process's lock as ErrLocked, when the queue is not
// empty yet.
func (s *Store) IndexNow(ctx context.Context) error {
	const op = "index now"
	if s.closed.Load() {
		return opErr(op, "", ErrClosed)
	}
	if s.w == nil { // a read-only store indexes nothing
		return opErr(op, "", s.readOnly)
	}
	for {
		n, err := s.w.indexOnce(ctx, false)
		if err != nil {
			if isIndexFailure(err) || errors.Is(err, errMarkMissing) {
				s.w.indexFailed(err) // switched off: the next open rebuilds it
				return nil
			}
			return opErr(op, "", err)
		}
		if n == 0 {
			return nil
		}
	}
}
