package db

// tx.go is the ONLY write path of sessiondb (enforced by lint/txonly): every
// write is BEGIN IMMEDIATE → callback → COMMIT on the Store's single writer
// connection, with time-based patience for another process's lock and
// exactly-once rules for everything else.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/internal/flock"
)

// txFunc is a write callback. It runs inside an open IMMEDIATE transaction
// and must not commit, roll back or keep tx, nor ignore an error from it. It
// is replayed whenever its changes were rolled back under it (see write),
// so it must be a pure function of its inputs and the database (no side
// effects outside tx).
type txFunc func(ctx context.Context, tx gen.DBTX) error

// writer owns the Store's one read-write connection. Every use of conn
// happens with mu held (seed 004: an unlocked read on the shared writer
// connection raced a batch write and destroyed a turn).
type writer struct {
	// mu is held by the batch leader (or a reader without a read pool):
	// whoever holds it owns the connection.
	mu sync.Mutex
	// +checklocks:mu
	conn *sql.Conn
	// tx is conn with its statements kept prepared: what callbacks and
	// the write path run their SQL on.
	// +checklocks:mu
	tx *stmtCache
	// +checklocks:mu
	pool *sql.DB

	path string
	wal  bool
	log  *slog.Logger
	// id is the file this writer opened; its header descriptor is
	// closed with the writer.
	// +checklocks:mu
	id identity

	// halt is sticky: once the file was replaced or found structurally
	// damaged, no write runs again on this Store (and Close skips the
	// checkpoint), so nothing is written into the wrong or a torn file.
	halt atomic.Pointer[error]
	// ftsOff is set once this store marked the full-text index damaged:
	// merging a damaged index only fails again.
	ftsOff atomic.Bool

	mergeEvery      uint64
	checkpointEvery uint64
	// walBound is the log size past which the WAL is started over (see
	// walBoundBytes); gatherWait bounds a leader's wait for writers (see
	// gather). Both are set at open; tests shorten or lengthen them.
	// +checklocks:mu
	walBound int64
	// +checklocks:mu
	gatherWait time.Duration
	// +checklocks:mu
	restart restartPace
	// +checklocks:mu
	pageSize int64 // read at the first checkpoint that needs it
	// lastBatch is how many requests the last batch took (see gather).
	// +checklocks:mu
	lastBatch   int
	afterCommit func() error // replaces maintenance in tests

	// restarting is set while a WAL restart runs in the background.
	restarting atomic.Bool

	// ix is the background indexer (ftsindexer.go).
	ix indexer

	// The group-commit queue: requests wait here for the next leader.
	qmu sync.Mutex
	// +checklocks:qmu
	queue []*request
	// handoff wakes one waiting caller to lead the next batch.
	handoff chan struct{}

	// Batches since the last checkpoint and FTS merge.
	sinceCheckpoint atomic.Uint64
	sinceMerge      atomic.Uint64

	writes              atomic.Uint64
	transactions        atomic.Uint64
	lockRetries         atomic.Uint64
	lockWaitNanos       atomic.Int64
	patienceExhausted   atomic.Uint64
	maintenanceRuns     atomic.Uint64
	maintenanceFailures atomic.Uint64
	walRestarts         atomic.Uint64
	strayTransactions   atomic.Uint64
	pin                 walPinWatch
}

// request is one caller's write, queued for (or inside) a batch.
type request struct {
	ctx      context.Context
	fn       txFunc
	patience time.Duration
	start    time.Time
	deadline time.Time
	ftsCause error       // set once the write is replayed with indexing off
	indexing bool        // the indexer's slice: not a caller's write (Stats)
	done     chan result // buffered: the leader never blocks on delivery
	answered atomic.Bool // done has its one result
}

// respond gives r its outcome, once: a second outcome is dropped.
func (r *request) respond(res result) {
	if r.answered.CompareAndSwap(false, true) {
		r.done <- res
	}
}

// result is what a caller gets back.
type result struct {
	err      error
	panicked any // the callback's panic, re-raised in the caller
}

// write runs fn as part of one IMMEDIATE transaction (group commit:
// writers that arrive while another batch commits share the next
// transaction and its one fsync, each inside its own SAVEPOINT, so a
// failing caller rolls back alone). A caller is acknowledged only after
// the COMMIT that made its write durable. It waits for another process's
// write lock for at most patience.
//
// Exactly-once: fn is replayed only after its changes were rolled back —
// after a lock error (SQLite BUSY or LOCKED); after another caller's
// statement made SQLite roll back the whole shared transaction; or once,
// with indexing switched off in the same transaction, after the full-text
// index was found damaged (the data is fine). An error from fn itself is
// returned and a panic is re-panicked in the caller; neither is ever
// replayed. A
// COMMIT whose outcome is unknown returns ErrCommitUnknown and is not
// retried. A caller whose ctx ends before its batch starts is removed
// cleanly; once its batch started it waits for the outcome.
func (w *writer) write(ctx context.Context, patience time.Duration, fn txFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	r := &request{ctx: ctx, fn: fn, patience: patience, start: now, deadline: now.Add(patience), done: make(chan result, 1)}
	w.enqueue(r)
	for {
		w.tryLead(r)
		select {
		case res := <-r.done:
			return res.deliver()
		case <-w.handoff:
		case <-ctx.Done():
			if w.dequeue(r) {
				return ctx.Err()
			}
			return (<-r.done).deliver() // already in a batch: wait for it
		}
	}
}

func (res result) deliver() error {
	if res.panicked != nil {
		panic(res.panicked) // the caller's panic, after its changes were undone
	}
	return res.err
}

func (w *writer) enqueue(r *request) {
	w.qmu.Lock()
	w.queue = append(w.queue, r)
	w.qmu.Unlock()
}

// dequeue removes r if no batch has taken it yet.
func (w *writer) dequeue(r *request) bool {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	for i, q := range w.queue {
		if q == r {
			w.queue = append(w.queue[:i], w.queue[i+1:]...)
			return true
		}
	}
	return false
}

// gatherWait bounds how long a leader waits for the last batch's writers
// to queue again: a few times what they take to come back on this kind of
// machine, well under an fsync. Measured with 16 appenders: 9.9 writes a
// transaction without it, 14.7 with it (50, 100 and 200 µs alike).
const gatherWait = 50 * time.Microsecond

// gather gives the writers of the last batch a moment to queue again
// before the next batch starts. Under steady concurrency the first of them
// back after their acknowledgement would otherwise find the lock free and
// lead a batch of one, the rest queueing behind it: batches alternate
// between one writer and all the others, and each fsync carries half what
// it could. It waits only after a shared batch and with a request queued,
// for at most gatherWait, and stops once as many requests are queued as
// that batch held; a lone writer never waits.
//
// +checklocks:w.mu
func (w *writer) gather() {
	if w.lastBatch < 2 || w.queueLen() == 0 { // nothing to lead: do not wait for it
		return
	}
	deadline := time.Now().Add(w.gatherWait)
	for w.queueLen() < w.lastBatch && time.Now().Before(deadline) {
		runtime.Gosched()
	}
}

func (w *writer) queueLen() int {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	return len(w.queue)
}

// takeQueue hands every waiting request to the caller.
func (w *writer) takeQueue() []*request {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	batch := w.queue
	w.queue = nil
	return batch
}

func (w *writer) queued() bool {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	return len(w.queue) > 0
}

// unlock releases the writer lock and, when writes queued while it was
// held, wakes one of their callers to lead the next batch. Every holder of
// mu releases it this way: a write that queued behind maintenance or a
// read would otherwise wait forever.
//
// +checklocksrelease:w.mu
func (w *writer) unlock() {
	w.mu.Unlock()
	if w.queued() {
		select {
		case w.handoff <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// tryLead leads a batch when no one else is leading.
//
// checklocks cannot follow TryLock's conditional acquisition; lead's own
// annotation checks the rest.
// +checklocksignore
func (w *writer) tryLead(own *request) {
	if w.mu.TryLock() {
		w.lead(own)
	}
}

// lead runs one batch with the writer lock held, releases it, runs
// post-commit maintenance, and wakes a waiter when more requests queued
// meanwhile.
//
// +checklocksrelease:w.mu
func (w *writer) lead(own *request) {
	if committed := w.leadBatch(own); committed > 0 {
		w.maintain()
		w.kickIndexer() // the batch may have queued rows for the index
	}
}

// runAlone runs one request in a transaction of its own, taking no queued
// request (the indexer's slices: an append never waits for indexing inside
// its own transaction). Requests that queue while it waits for another
// process's lock join it, as they join any batch that waits.
//
// +checklocks:w.mu
func (w *writer) runAlone(r *request) (committed int) {
	committed = w.runBatch(r, []*request{r})
	w.closeStrayTransaction()
	return committed
}

// leadBatch runs the queued batch and releases the writer lock.
//
// checklocks cannot follow a release deferred through a possible panic;
// the callee (runBatch) and the release (unlockAfter) carry their own
// annotations.
// +checklocksrelease:w.mu
// +checklocksignore
func (w *writer) leadBatch(own *request) (committed int) {
	w.gather()
	batch := w.takeQueue()
	if len(batch) > 0 {
		w.lastBatch = len(batch)
	}
	defer w.unlockAfter(batch)
	if len(batch) > 0 {
		committed = w.runBatch(own, slices.Clone(batch))
		w.closeStrayTransaction()
	}
	return committed
}

// unlockAfter releases the writer lock after a batch, even if something
// outside the callbacks panicked: then the store halts (its state is
// unknown), every request of the batch is answered, and the panic goes on.
//
// +checklocksrelease:w.mu
func (w *writer) unlockAfter(batch []*request) {
	if p := recover(); p != nil {
		finish(batch, w.stop(fmt.Errorf("internal panic in the write path: %v", p)))
		w.unlock()
		panic(p)
	}
	w.unlock()
}

// beginSlice bounds one wait for the write lock, so cancelled callers and
// expired patience are noticed while another process holds the lock.
const beginSlice = 200 * time.Millisecond

// runBatch runs requests in IMMEDIATE transactions until each has its
// outcome, and returns how many committed.
//
// +checklocks:w.mu
func (w *writer) runBatch(own *request, batch []*request) (committed int) {
	var lockErr error // the last lock error met while waiting
	for len(batch) > 0 {
		if lockErr != nil {
			batch = append(batch, w.takeQueue()...) // F3: arrivals share the wait and its expiry
		}
		batch = dropCancelled(batch)
		if len(batch) == 0 {
			return committed
		}
		if err := w.closedOrHalted(); err != nil {
			finish(batch, err)
			return committed
		}
		now := time.Now()
		if lockErr != nil { // patience runs out per caller
			batch = w.expire(batch, now, lockErr)
			if len(batch) == 0 {
				return committed
			}
			if !slices.Contains(batch, own) { // F4: the leader's caller is answered: step down
				w.requeueFront(batch)
				return committed
			}
		}
		last := batch[0].deadline
		for _, r := range batch[1:] {
			last = maxTime(last, r.deadline)
		}
		beginCtx, cancel := context.WithDeadline(context.Background(), minTime(maxTime(last, now.Add(time.Millisecond)), now.Add(beginSlice)))
		err := w.begin(beginCtx)
		expired := beginCtx.Err() != nil
		cancel()
		if err != nil {
			if isLockError(err) || (expired && errors.Is(err, sqlite3.INTERRUPT)) {
				w.lockRetries.Add(1)
				w.lockWaitNanos.Add(int64(time.Since(now)))
				lockErr = err
				if !expired { // BUSY without waiting (recovery, snapshot): back off
					w.backoff(batch)
				}
				continue
			}
			finish(batch, w.classify(fmt.Errorf("begin: %w", err)))
			return committed
		}
		lockErr = nil // the lock was had: patience is judged at the next wait
		if waited := time.Since(now); waited > time.Millisecond {
			// SQLite's busy handler waited inside BEGIN before it got the
			// lock (its first sleep is 1 ms): that wait counts too.
			w.lockWaitNanos.Add(int64(waited))
		}
		if err := w.id.checkFile(context.Background(), w.path, w.conn); err != nil {
			w.rollback()
			if errors.Is(err, ErrReplaced) {
				err = w.stop(err)
			} else {
				err = w.classify(err)
			}
			finish(batch, err)
			return committed
		}
		ok, replay, cbLock := w.runCallbacks(batch)
		batch = replay
		if cbLock != nil { // F2: a lock error inside a callback waits and expires like one at BEGIN
			lockErr = cbLock
			if len(ok) == 0 {
				w.rollback()
				w.backoff(batch)
				continue
			}
		}
		if len(ok) == 0 {
			w.rollback() // nothing to keep (a no-op when already rolled back)
			continue
		}
		if err := w.halted(); err != nil {
			w.rollback()
			finish(ok, err)
			continue
		}
		// The commit carries the file's stamp and meets no foreign trigger
		// (guardCommit). Nothing is committed yet: a failure is never unknown.
		if err := w.guardCommit(context.Background()); err != nil {
			w.rollback()
			finish(ok, w.classify(err))
			continue
		}
		// A cancelled caller must not interrupt COMMIT halfway: that would
		// turn a clean write into an unknown one.
		_, err = w.tx.ExecContext(context.Background(), "COMMIT")
		switch {
		case err == nil:
			committed += len(ok)
			if writes := len(ok) - countIndexing(ok); writes > 0 {
				w.writes.Add(uint64(writes))
				w.transactions.Add(1)
			}
			for _, r := range ok {
				if r.ftsCause != nil {
					w.ftsSwitchedOff(r.ftsCause)
				}
				r.respond(result{})
			}
		case w.inTransaction():
			// COMMIT did not happen and the transaction is still open: undo
			// it; after a lock error every write in it is replayed, after
			// index damage (flushed at COMMIT) every write is replayed once
			// with indexing off.
			w.rollback()
			if isLockError(err) {
				lockErr = err
				batch = append(batch, ok...)
				continue
			}
			if isFTSDamage(err) {
				batch = append(batch, w.replayWithoutFTS(ok, err)...)
				continue
			}
			finish(ok, w.classify(fmt.Errorf("commit: %w", err)))
		case isSyncFailure(err):
			// The frames reached the WAL but not, as far as anyone can
			// tell, the disk: unknown, and no later fsync may be trusted
			// with them (syncfailure.go).
			w.haltOnSyncFailure(err)
			finish(ok, commitUnknown(err))
		case isDiskFull(err):
			// No room for the frames: SQLite rolled the transaction back,
			// and the next commit overwrites what it wrote past the log's
			// end. Nothing was committed; writes resume once space is freed.
			finish(ok, fmt.Errorf("commit: %w", err))
		case errors.Is(err, sqlite3.IOERR):
			// An I/O error may strike after the commit frame reached the
			// WAL: the writes may or may not be durable.
			finish(ok, commitUnknown(err))
		default:
			// SQLite rolled the transaction back itself (a constraint, a
			// damaged index, a full disk): nothing was committed.
			if isFTSDamage(err) {
				batch = append(batch, w.replayWithoutFTS(ok, err)...)
				continue
			}
			finish(ok, w.classify(fmt.Errorf("commit: %w", err)))
		}
	}
	return committed
}

// begin runs BEGIN IMMEDIATE, ctx bounding its wait for the write lock.
// The driver checks ctx from SQLite's progress callback, which can fire
// after BEGIN's last step (SQLite counts steps across runs of a kept
// statement): the transaction is then open and the lock ours although the
// call reports INTERRUPT. Such a BEGIN took effect and is treated as one;
// retried as a lock wait, it left a transaction open that failed the next
// BEGIN with "cannot start a transaction within a transaction" (torture).
// That reading needs no transaction open before: one is rolled back first.
//
// +checklocks:w.mu
func (w *writer) begin(ctx context.Context) error {
	w.closeStrayTransaction()
	_, err := w.tx.ExecContext(ctx, "BEGIN IMMEDIATE")
	if err != nil && w.inTransaction() {
		return nil
	}
	return err
}

// closeStrayTransaction rolls back a transaction open before a BEGIN or
// after a batch — never expected: every path of runBatch ends the
// transaction it began, and one left open would hold the database's
// write lock while the store sits idle and fail its next BEGIN. What it
// holds was never acknowledged (acknowledgement follows the COMMIT that
// closes it), so the rollback loses nothing; it is logged as the bug it
// is, with the statement that ran last, and counted
// (Stats.StrayTransactions). A halted store (a failed rollback halts it)
// is left alone: it writes nothing more.
//
// +checklocks:w.mu
func (w *writer) closeStrayTransaction() {
	if w.conn == nil || w.halted() != nil || !w.inTransaction() {
		return
	}
	w.strayTransactions.Add(1)
	w.log.Error("sessiondb: a write left a transaction open; it was rolled back (a bug; please report it)",
		"path", w.path, "last_statement", w.tx.lastStatement())
	w.rollback()
}

// replayWithoutFTS answers the rolled-back requests that already ran with
// indexing off and returns the others, each set to replay once with the
// index marked stale in its own transaction (the data is fine).
func (w *writer) replayWithoutFTS(batch []*request, cause error) (replay []*request) {
	for _, r := range batch {
		if r.ftsCause != nil {
			r.respond(result{err: w.classify(fmt.Errorf("commit: %w", cause))})
			continue
		}
		r.offFTS(cause)
		replay = append(replay, r)
	}
	return replay
}

// backoff sleeps between lock retries, never past the earliest deadline in
// the batch.
func (w *writer) backoff(batch []*request) {
	first := batch[0].deadline
	for _, r := range batch[1:] {
		first = minTime(first, r.deadline)
	}
	_ = sleepJitter(context.Background(), time.Since(batch[0].start), min(beginSlice, time.Until(first)))
}

// runCallbacks runs each request's callback inside the open transaction —
// each in its own SAVEPOINT when there are several, so that a failure
// undoes only its own changes. It returns the requests whose changes stand
// and those to run again in a new transaction; the others have their
// outcome. (The savepoints cost little: FTS5 flushes its pending index at
// every savepoint, but appends write no index — new messages are only
// queued for the background indexer; only the rare update or delete of an
// indexed row touches an index there.)
//
// After every callback the transaction must still be open: a callback that
// ignored an error which made SQLite roll everything back (a statement
// with OR ROLLBACK, a full disk, an interrupt) gets errRolledBack — its
// changes are gone — and the others run again, their changes gone too.
//
// +checklocks:w.mu
func (w *writer) runCallbacks(batch []*request) (ok, replay []*request, lockErr error) {
	savepoints := len(batch) > 1
	for i, r := range batch {
		if savepoints {
			if _, err := w.tx.ExecContext(context.Background(), "SAVEPOINT sessiondb_call"); err != nil {
				return ok, append(replay, batch[i:]...), lockErr // the transaction is unusable: start again
			}
		}
		err, panicked := runCallback(r.ctx, r.fn, w.tx)
		if err == nil && panicked == nil && !w.inTransaction() {
			err = errRolledBack
		}
		if err == nil && panicked == nil {
			if savepoints {
				if _, err := w.tx.ExecContext(context.Background(), "RELEASE sessiondb_call"); err != nil {
					// This caller's changes may still be in the transaction:
					// undo everyone's and run them all again.
					w.rollback()
					return nil, append(append(replay, ok...), batch[i:]...), lockErr
				}
			}
			ok = append(ok, r)
			continue
		}
		// Undo this caller's changes only.
		gone := savepoints && !w.inTransaction() // F1: SQLite rolled back everyone's changes
		if gone {
		} else if savepoints {
			_, rerr := w.tx.ExecContext(context.Background(), "ROLLBACK TO sessiondb_call")
			if rerr == nil {
				_, rerr = w.tx.ExecContext(context.Background(), "RELEASE sessiondb_call")
			}
			if rerr != nil {
				w.stop(fmt.Errorf("undo one write of a batch: %w", rerr))
			}
		} else {
			w.rollback()
		}
		switch {
		case panicked != nil:
			r.respond(result{panicked: panicked})
		case isFTSDamage(err) && r.ftsCause == nil:
			r.offFTS(err)
			replay = append(replay, r)
		case isLockError(err):
			w.lockRetries.Add(1)
			lockErr = err
			replay = append(replay, r)
		default:
			r.respond(result{err: w.classify(err)})
		}
		if gone {
			return nil, append(append(replay, ok...), batch[i+1:]...), lockErr
		}
	}
	return ok, replay, lockErr
}

// errRolledBack answers a callback that returned success although its
// transaction had been rolled back under it: none of its changes stand.
var errRolledBack = errors.New("the write's transaction was rolled back under it (an error inside it was ignored): its changes up to that error were undone, and any statement it ran after it ran outside the transaction")

func (w *writer) requeueFront(batch []*request) {
	w.qmu.Lock()
	w.queue = append(append([]*request(nil), batch...), w.queue...)
	w.qmu.Unlock()
}

// offFTS makes the request's replay switch indexing off in the same
// transaction as its write.
func (r *request) offFTS(cause error) {
	r.ftsCause = cause
	inner := r.fn
	r.fn = func(ctx context.Context, tx gen.DBTX) error {
		if err := markFTSStale(ctx, tx); err != nil {
			return err
		}
		return inner(ctx, tx)
	}
}

// expire answers the requests whose patience ran out while the lock was
// held elsewhere.
func (w *writer) expire(batch []*request, now time.Time, cause error) []*request {
	keep := batch[:0]
	for _, r := range batch {
		if now.Before(r.deadline) {
			keep = append(keep, r)
			continue
		}
		if r.indexing { // not a caller's write: the indexer tries again later
			r.respond(result{err: &LockedError{Path: w.path, Patience: r.patience, Err: cause}})
			continue
		}
		w.patienceExhausted.Add(1)
		r.respond(result{err: w.lockedError(r.patience, cause)})
	}
	return keep
}

// dropCancelled answers the requests whose callers gave up.
func dropCancelled(batch []*request) []*request {
	keep := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.respond(result{err: err})
			continue
		}
		keep = append(keep, r)
	}
	return keep
}

// countIndexing counts the indexer's slices in a batch.
func countIndexing(batch []*request) (n int) {
	for _, r := range batch {
		if r.indexing {
			n++
		}
	}
	return n
}

func finish(batch []*request, err error) {
	for _, r := range batch {
		r.respond(result{err: err})
	}
}

// closedOrHalted is why no write can run now, if any.
//
// +checklocks:w.mu
func (w *writer) closedOrHalted() error {
	if w.conn == nil {
		return ErrClosed
	}
	return w.halted()
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// commitUnknown reports a COMMIT that may or may not have made its writes
// durable.
func commitUnknown(err error) error { return fmt.Errorf("%w: %w", ErrCommitUnknown, err) }

// classify makes structural damage sticky.
func (w *writer) classify(err error) error {
	if isStructuralDamage(err) {
		return w.stop(fmt.Errorf("%w: %w", ErrCorrupt, err))
	}
	return err
}

// stop halts all further writes with err (the first halt wins).
func (w *writer) stop(err error) error {
	if w.halt.CompareAndSwap(nil, &err) {
		w.log.Error("sessiondb: writes halted on this store; run `sessiondb verify` and `sessiondb repair`", "path", w.path, "err", err)
	}
	return *w.halt.Load()
}

// halted returns the sticky halt error, if any.
func (w *writer) halted() error {
	if p := w.halt.Load(); p != nil {
		return *p
	}
	return nil
}

// runCallback runs fn and catches its panic, so that attempt can roll back
// before re-raising it. It touches no Store state.
func runCallback(ctx context.Context, fn txFunc, tx gen.DBTX) (err error, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return fn(ctx, tx), nil
}

// +checklocks:w.mu
func (w *writer) rollback() {
	if _, err := w.tx.ExecContext(context.Background(), "ROLLBACK"); err != nil && w.inTransaction() {
		// The connection would hold the write lock forever: stop writing.
		w.stop(fmt.Errorf("rollback failed; the writer is stuck in a transaction: %w", err))
	}
}

// inTransaction asks SQLite whether a transaction is open on the writer.
//
// +checklocks:w.mu
func (w *writer) inTransaction() bool {
	open := false
	_ = w.conn.Raw(func(dc any) error {
		if c, ok := dc.(driver.Conn); ok {
			open = !c.Raw().GetAutocommit()
		}
		return nil
	})
	return open
}

// read runs fn on the writer connection, for stores whose file refused WAL
// (no read pool): the lock keeps the read off a concurrent write.
func (w *writer) read(ctx context.Context, fn func(gen.DBTX) error) error {
	w.mu.Lock()
	defer w.unlock()
	if w.conn == nil {
		return ErrClosed
	}
	return fn(w.tx)
}

// due counts one more committed batch and reports (resetting the count)
// when every of them have passed.
func due(counter *atomic.Uint64, every uint64) bool {
	if counter.Add(1) < every {
		return false
	}
	counter.Store(0)
	return true
}

// maintain runs post-commit maintenance: a checkpoint (see checkpoint)
// every checkpointEvery batches and a bounded FTS merge every mergeEvery
// batches. It counts batches, not writes: a group commit writes the WAL
// and adds a full-text segment once for all its writes, so counting them
// one by one checkpointed a batch of 16 every third transaction, a tenth
// of the CPU at 16 appenders. It runs after COMMIT, so it can never fail
// or replay the write it follows: errors and panics are logged and
// counted, never returned. A WAL restart, which may wait seconds for
// readers, runs in the background instead (see restartWAL), so the
// caller that led the batch is not held up.
func (w *writer) maintain() {
	step := w.afterCommit
	if step == nil {
		checkpoint := w.wal && w.checkpointEvery > 0 && due(&w.sinceCheckpoint, w.checkpointEvery)
		merge := w.mergeEvery > 0 && !w.ftsOff.Load() && due(&w.sinceMerge, w.mergeEvery)
		if !checkpoint && !merge {
			return
		}
		step = func() error {
			restart, err := w.maintenance(checkpoint, merge)
			if restart && w.restarting.CompareAndSwap(false, true) {
				go func() {
					defer w.restarting.Store(false)
					w.runMaintenance(w.restartWAL)
				}()
			}
			return err
		}
	}
	w.runMaintenance(step)
}

// runMaintenance runs one maintenance step: counted, its errors and panics
// logged, never returned.
func (w *writer) runMaintenance(step func() error) {
	w.maintenanceRuns.Add(1)
	defer func() {
		if p := recover(); p != nil {
			w.maintenanceFailures.Add(1)
			w.log.Error("sessiondb: post-commit maintenance panicked; the write is committed", "path", w.path, "panic", p)
		}
	}()
	if err := step(); err != nil {
		w.haltOnSyncFailure(err) // a checkpoint's fsync: trust none after it
		if isFTSDamage(err) && !w.ftsOff.Load() {
			w.ftsSwitchedOff(err) // first, so the write below merges nothing
			_ = w.write(context.Background(), time.Second, markFTSStale)
		}
		w.maintenanceFailures.Add(1)
		w.log.Warn("sessiondb: post-commit maintenance failed; the write is committed", "path", w.path, "err", err)
	}
}

// maintenance merges and checkpoints, and reports whether the WAL has
// outgrown its bound and is due a restart.
func (w *writer) maintenance(checkpoint, merge bool) (restart bool, err error) {
	w.mu.Lock()
	defer w.unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if ok, err := w.maintainable(ctx); !ok {
		return false, err
	}
	var errs []error
	if merge {
		// An autocommit statement: its own short transaction, bounded by
		// the page count and the timeout. Hand-written: sqlc's parser
		// rejects FTS5's hidden command columns (messages_fts, rank).
		for _, stmt := range []string{
			"INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)",
			"INSERT INTO messages_fts_trigram (messages_fts_trigram, rank) VALUES ('merge', ?)",
		} {
			_, err := w.tx.ExecContext(ctx, stmt, ftsMergePages)
			errs = append(errs, err)
		}
	}
	if checkpoint {
		var err error
		restart, err = w.checkpoint(ctx)
		errs = append(errs, err)
	}
	return restart, errors.Join(errs...)
}

// maintainable reports whether maintenance may touch the file: the store
// is open, not halted, and the file is still the one it opened (never
// merge or checkpoint into another file).
//
// +checklocks:w.mu
func (w *writer) maintainable(ctx context.Context) (bool, error) {
	if w.conn == nil || w.halted() != nil {
		return false, nil
	}
	if err := w.id.checkFile(ctx, w.path, w.conn); errors.Is(err, ErrReplaced) {
		return false, w.stop(err)
	}
	return true, nil
}

// ftsSwitchedOff records (once, loudly) that indexing is off until the
// next open rebuilds the full-text index.
func (w *writer) ftsSwitchedOff(cause error) {
	if w.ftsOff.CompareAndSwap(false, true) {
		w.log.Error("sessiondb: the full-text index is damaged; writes continue without indexing and the index is rebuilt on the next open",
			"path", w.path, "err", cause)
	}
}

// ftsMergePages bounds each incremental FTS merge.
const ftsMergePages = 500

// close checkpoints (PASSIVE) and closes the writer. It is idempotent.
func (w *writer) close() error {
	w.mu.Lock()
	defer w.unlock() // queued writes then find the store closed
	if w.conn == nil {
		return nil
	}
	var errs []error
	if w.halted() == nil {
		// The file may have been replaced while the store sat idle.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := w.id.checkFile(ctx, w.path, w.conn); errors.Is(err, ErrReplaced) {
			w.stop(err)
		}
		cancel()
	}
	if w.halted() == nil && w.wal {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := checkpointPassive(ctx, w.conn); err != nil {
			w.haltOnSyncFailure(err) // then SQLite's own checkpoint at close must not run either
			w.log.Warn("sessiondb: close-time checkpoint failed", "path", w.path, "err", err)
		}
		cancel()
	}
	if w.halted() != nil {
		// Never checkpoint into a replaced or torn file — not even the
		// automatic checkpoint SQLite runs when its last connection closes.
		_ = w.conn.Raw(func(dc any) error {
			if c, ok := dc.(driver.Conn); ok {
				_, err := c.Raw().Config(sqlite3.DBCONFIG_NO_CKPT_ON_CLOSE, true)
				return err
			}
			return nil
		})
	}
	errs = append(errs, w.tx.close(), w.conn.Close(), w.pool.Close())
	if w.id.header != nil {
		errs = append(errs, w.id.header.Close())
	}
	if errors.Is(w.halted(), ErrReplaced) {
		w.id.retireWAL(w.path, w.log)
	}
	w.conn, w.tx, w.pool = nil, nil, nil
	return errors.Join(errs...)
}

// sleepJitter waits between lock retries: short while the hold is young,
// longer once it has lasted, never past the deadline or ctx.
func sleepJitter(ctx context.Context, waited, left time.Duration) error {
	d := time.Duration(5+rand.IntN(45)) * time.Millisecond
	if waited > 2*time.Second {
		d = time.Duration(100+rand.IntN(400)) * time.Millisecond
	}
	d = max(min(d, left), time.Millisecond)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// lockedError reports exhausted patience: who held the lock (where the OS
// can tell) and that the database itself is healthy. It is returned, not
// logged: the caller reports it, and a log line too would say it twice.
func (w *writer) lockedError(patience time.Duration, cause error) error {
	return &LockedError{Path: w.path, Patience: patience, Holders: flock.Holders(w.path), Err: cause}
}

// exclusive runs fn on the writer connection outside any transaction, with
// no write in flight and none starting until it returns: for maintenance
// that cannot run inside a transaction (VACUUM). The file's identity is
// checked first, as for every write, and a lock error comes back as a
// LockedError (ErrLocked).
func (w *writer) exclusive(ctx context.Context, fn func(ctx context.Context, c *sql.Conn) error) error {
	w.mu.Lock()
	defer w.unlock()
	if err := w.closedOrHalted(); err != nil {
		return err
	}
	if err := w.id.checkFile(ctx, w.path, w.conn); err != nil {
		if errors.Is(err, ErrReplaced) {
			return w.stop(err)
		}
		return err
	}
	err := fn(ctx, w.conn)
	w.haltOnSyncFailure(err) // VACUUM and its checkpoints sync too
	if isLockError(err) {
		// Another connection held the write lock past the writer's busy
		// wait: the same typed error as a write whose patience ran out.
		err = w.lockedError(busyTimeout[kindWriter], err)
	}
	return err
}
