package db

// tx.go is the ONLY write path of sessiondb (enforced by lint/txonly): every
// write is BEGIN IMMEDIATE → callback → COMMIT on the Store's single writer
// connection, with time-based patience for another process's lock and
// exactly-once rules for everything else. It holds the commit protocol
// alone — request, group-commit queue, leadership, batch, callbacks — and
// leaves the writer's state and close to writer.go, post-commit
// maintenance to maintenance.go and exclusive access to exclusive.go.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"

	"github.com/sessiondb/sessiondb/db/gen"
)

// txFunc is a write callback. It runs inside an open IMMEDIATE transaction
// and must not commit, roll back or keep tx, nor ignore an error from it. It
// is replayed whenever its changes were rolled back under it (see write),
// so it must be a pure function of its inputs and the database (no side
// effects outside tx).
type txFunc func(ctx context.Context, tx gen.DBTX) error

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
	// outcome, when set, learns the outcome as it is given, under the
	// writer lock (noteSpace).
	outcome func(error)
}

// respond gives r its outcome, once: a second outcome is dropped.
func (r *request) respond(res result) {
	if r.answered.CompareAndSwap(false, true) {
		if r.outcome != nil && res.panicked == nil {
			r.outcome(res.err)
		}
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
// transaction and its one fsync; a failing caller never takes another's
// write with it, see runCallbacks). A caller is acknowledged only after
// the COMMIT that made its write durable. It waits for another process's
// write lock for at most patience.
//
// Exactly-once: fn is replayed only after its changes were rolled back —
// after a lock error (SQLite BUSY or LOCKED); after another caller's
// statement made SQLite roll back the whole shared transaction; after a
// caller failed in a batch run without savepoints, which then runs again
// with one for each caller, the failing caller too (runCallbacks); or
// once, with indexing switched off in the same transaction, after the
// full-text index was found damaged (the data is fine). An error from fn
// itself in a run whose outcome stands is returned and a panic is
// re-panicked in the caller; neither is replayed after that. A COMMIT
// whose outcome is unknown returns ErrCommitUnknown and is not
// retried. A caller whose ctx ends before its batch starts is removed
// cleanly; once its batch started it waits for the outcome.
func (w *writer) write(ctx context.Context, patience time.Duration, fn txFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	r := &request{ctx: ctx, fn: fn, patience: patience, start: now, deadline: now.Add(patience), done: make(chan result, 1), outcome: w.noteSpace}
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
		w.maintain(false)
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
	w.restoreSync()
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
	// After a caller failed, batches run in savepoints for a while
	// (runCallbacks): where callbacks often fail, a batch that has to run
	// twice would cost more than the savepoints save.
	careful := w.carefulBatches > 0
	if careful {
		w.carefulBatches--
	}
	for len(batch) > 0 {
		if lockErr != nil {
			batch = append(batch, w.takeQueue()...) // arrivals share the wait and its expiry
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
			if !slices.Contains(batch, own) { // the leader's caller is answered: step down
				w.requeueFront(batch)
				return committed
			}
		}
		last := batch[0].deadline
		for _, r := range batch[1:] {
			last = maxTime(last, r.deadline)
		}
		beginCtx, cancel := context.WithDeadline(context.Background(), minTime(maxTime(last, now.Add(time.Millisecond)), now.Add(beginSlice)))
		err := w.begin(beginCtx, batch)
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
		ok, replay, cbLock, undone := w.runCallbacks(batch, careful)
		if undone {
			careful, w.carefulBatches = true, carefulAfterFailure
		}
		batch = replay
		if cbLock != nil { // a lock error inside a callback waits and expires like one at BEGIN
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
			w.stampCommitted()
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
// Then the connection's synchronous level is set for batch (indexsync.go),
// which SQLite allows only outside a transaction.
//
// +checklocks:w.mu
func (w *writer) begin(ctx context.Context, batch []*request) error {
	w.closeStrayTransaction()
	if err := w.syncLevel(batch); err != nil {
		return err
	}
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

// runCallbacks runs each request's callback inside the open transaction.
// It returns the requests whose changes stand and those to run again in a
// new transaction; the others have their outcome.
//
// Unless careful, a batch runs with no savepoints (undone reports that
// one of its callers failed): a SAVEPOINT and a RELEASE around each
// caller were about 8% of the writer's time at 64 appenders, and a
// callback almost never fails. When one does, its changes cannot be
// undone alone, so the whole transaction is rolled back and every caller
// runs again, careful: each in its own SAVEPOINT, so that a failure undoes
// only its own changes. (The savepoints cost little else: FTS5 flushes its
// pending index at every savepoint, but appends write no index — new
// messages are only queued for the background indexer; only the rare
// update or delete of an indexed row touches an index there.)
//
// After every callback the transaction must still be open: a callback that
// ignored an error which made SQLite roll everything back (a statement
// with OR ROLLBACK, a full disk, an interrupt) gets errRolledBack — its
// changes are gone — and the others run again, their changes gone too.
//
// +checklocks:w.mu
func (w *writer) runCallbacks(batch []*request, careful bool) (ok, replay []*request, lockErr error, undone bool) {
	savepoints := len(batch) > 1
	for i, r := range batch {
		if savepoints && careful {
			if _, err := w.tx.ExecContext(context.Background(), "SAVEPOINT sessiondb_call"); err != nil {
				return ok, append(replay, batch[i:]...), lockErr, false // the transaction is unusable: start again
			}
		}
		err, panicked := runCallback(r.ctx, r.fn, w.tx)
		if panicked != nil && w.tx.driverPanicked(panicked) {
			// Not the caller's panic: the connection's (stmtcache.go).
			err, panicked = w.stop(driverPanic(panicked)), nil
		}
		if err == nil && panicked == nil && !w.inTransaction() {
			err = errRolledBack
		}
		if err == nil && panicked == nil {
			if savepoints && careful {
				if _, err := w.tx.ExecContext(context.Background(), "RELEASE sessiondb_call"); err != nil {
					// This caller's changes may still be in the transaction:
					// undo everyone's and run them all again.
					w.rollback()
					return nil, append(append(replay, ok...), batch[i:]...), lockErr, false
				}
			}
			ok = append(ok, r)
			continue
		}
		if savepoints && !careful && w.inTransaction() {
			// No savepoint to undo this caller alone: undo everyone's and
			// run them all again, careful, at once. A damaged file halts
			// the store now, as it would in a careful run (the next run
			// then answers everyone with the halt), and index damage is
			// kept for the next run (which indexes nothing for this
			// caller). A lock error is not waited out here: if the caller
			// meets it again in the careful run, it alone waits. (When
			// SQLite rolled everyone back itself, a savepoint would not
			// have helped: that is handled below, as in a careful run.)
			w.rollback()
			w.batchReplays.Add(1)
			switch {
			case panicked != nil:
			case isStructuralDamage(err):
				w.classify(err)
			case isFTSDamage(err) && r.ftsCause == nil:
				r.offFTS(err)
			case isLockError(err):
				w.lockRetries.Add(1)
			}
			return nil, batch, nil, true // nothing answered, nothing kept: all run again
		}
		// Undo this caller's changes only.
		gone := savepoints && !w.inTransaction() // SQLite rolled back everyone's changes
		if gone {
		} else if savepoints { // careful
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
			w.batchReplays.Add(1)
			return nil, append(append(replay, ok...), batch[i+1:]...), lockErr, false
		}
	}
	return ok, replay, lockErr, false
}

// carefulAfterFailure is how many transactions (the indexer's slices
// included) run careful after a caller of a batch without savepoints
// failed.
const carefulAfterFailure = 64

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

// driverPanic is the halt after the driver panicked inside a statement.
func driverPanic(p any) error {
	return fmt.Errorf("%w: the SQLite driver panicked inside a statement (%v); writes are halted until the store is reopened "+
		"(a message larger than the driver's memory is the known cause: see Store.MaxMessageBytes)", ErrInternal, p)
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
