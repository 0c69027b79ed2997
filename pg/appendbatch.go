package pg

// appendbatch.go is the PostgreSQL engine's group commit for appends
// (driver.Appender): concurrent appends of one process share one READ
// COMMITTED transaction and its one WAL flush, as db/tx.go's batches do
// for SQLite. It queues the appends and leads the batches; their
// transactions begin and end in tx.go, beside Write's (lint/txonly allows
// no other file). Why READ COMMITTED holds the domain's rules, and which
// lock protects which: docs/ARCHITECTURE.md, "PostgreSQL: appends in
// shared transactions".

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store/driver"
)

// appendRequest is one caller's append, queued for (or inside) a batch.
type appendRequest struct {
	ctx       context.Context
	sessionID string
	fn        func(context.Context, driver.Executor) error
	looksUp   []string // what fn looks up (driver.Appender): with none in common, appends may run side by side
	patience  time.Duration
	deadline  time.Time
	done      chan appendResult // buffered: the leader never blocks on delivery
	answered  atomic.Bool
	// aside is set (under the appender's qmu) when the request is handed
	// to runAside: from then on the aside goroutine, not its leader,
	// counts it in flight.
	aside bool
}

type appendResult struct {
	err      error
	panicked any // the callback's panic, re-raised in the caller
}

// respond gives r its outcome, once.
func (r *appendRequest) respond(res appendResult) {
	if r.answered.CompareAndSwap(false, true) {
		r.done <- res
	}
}

// appender queues a process's appends and runs them in batches, up to
// maxBatches at a time, a session in one of them at most: one batch's
// statements run while another's COMMIT waits for its WAL flush.
type appender struct {
	eng     *engine
	leaders chan struct{} // a slot per batch in flight
	qmu     sync.Mutex
	// +checklocks:qmu
	queue []*appendRequest
	// inFlight counts each session's appends in batches in flight: a
	// batch takes none of a session another batch holds.
	// +checklocks:qmu
	inFlight map[string]int
	// aside holds the appends whose session another transaction held
	// when their batch began; one goroutine at a time runs them
	// (runAside), waiting for the locks.
	// +checklocks:qmu
	aside []*appendRequest
	// +checklocks:qmu
	asideRunning bool
	// halted is set by Close (halt): runAside starts no goroutine after
	// it, and asideDone counts the one running, which Close awaits.
	// +checklocks:qmu
	halted    bool
	asideDone sync.WaitGroup
	// stop bounds every batch's statements and connection waits (never a
	// COMMIT): Close cancels it, so a batch waiting for a lock ends at
	// once, its callers answered ErrClosed.
	stop      context.Context
	halt      context.CancelFunc
	handoff   chan struct{}
	lastBatch atomic.Int64 // the size of the last batch taken (gather)
	careful   atomic.Int64 // batches left to run with a savepoint per caller
	// reruns counts the transactions run again after the server rolled
	// them back (a deadlock, a lock timeout of the batch's least patient
	// caller, a connection lost before COMMIT); batches counts commits;
	// asides counts the appends handed to runAside; oneRounds the
	// batches sent in one round trip (oneround.go), and oneRoundsChecked
	// those of them whose checks the server failed (nothing written).
	reruns, batches, appends, asides, oneRounds, oneRoundsChecked atomic.Int64
	// commitAndNotify is a batch's COMMIT followed by its NOTIFY
	// (watch.go) in a transaction of its own, one round trip. A NOTIFY
	// inside the batch's transaction would hold the server's notification
	// lock, one for the whole server, from its COMMIT until the WAL flush
	// is done, so the commits of every process's batches would flush one
	// after another. Alone, the NOTIFY's transaction commits without
	// waiting for its flush (synchronous_commit off: it carries nothing
	// to keep), so it holds that lock a moment. It runs only once the
	// COMMIT succeeded: an error skips the rest of the statements.
	commitAndNotify string
	// prepares: the pool's statements are prepared before the batch that
	// runs them (pgx's extended modes but exec), so a batch in one round
	// trip prepares its own by name first (prepareOneRound).
	prepares bool
}

func newAppender(eng *engine) *appender {
	stop, halt := context.WithCancel(context.Background())
	return &appender{eng: eng, handoff: make(chan struct{}, 1), leaders: make(chan struct{}, maxBatches),
		inFlight: map[string]int{}, stop: stop, halt: halt,
		// Hand-written: transaction control; the statements after COMMIT
		// form an implicit transaction of their own (the simple protocol).
		commitAndNotify: "COMMIT; SET LOCAL synchronous_commit = off; " + eng.notify,
		prepares:        preparesFirst(eng.pool.Config().ConnConfig.DefaultQueryExecMode)}
}

// preparesFirst reports whether pgx prepares or describes a batch's new
// statements in a round trip of its own before sending the batch.
func preparesFirst(m pgx.QueryExecMode) bool {
	return m != pgx.QueryExecModeSimpleProtocol && m != pgx.QueryExecModeExec
}

// close ends the appends run aside and waits for their goroutine, so that
// nothing of the store runs on the pool once Close returns (a pool given
// to OpenPool is its owner's again). Their callers get ErrClosed; the
// engine's closed flag is set before.
func (a *appender) close() {
	a.qmu.Lock()
	a.halted = true
	a.qmu.Unlock()
	a.halt()
	a.asideDone.Wait()
}

// maxBatches is how many batches of one process may be in flight.
const maxBatches = 2

// WriteAppend runs fn, an append to sessionID, in a transaction shared
// with the appends other goroutines of this process make meanwhile
// (driver.Appender). The caller is answered after the COMMIT that made its
// rows durable, or with its own error, which undid only its own changes;
// fn runs again only after its changes were rolled back. A caller whose
// ctx ends before its batch takes it is removed (ctx's error); once taken
// it waits for the batch, which patience bounds.
func (d pgDriver) WriteAppend(ctx context.Context, patience time.Duration, sessionID string, looksUp []string, fn func(context.Context, driver.Executor) error) error {
	if d.closed.Load() {
		return driver.ErrClosed
	}
	if d.readOnly != nil {
		return d.readOnly
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The caller's own deadline bounds its batch's lock waits as its
	// patience does: the batch is then rolled back in time to answer it
	// with its context's error, and runs again without it.
	deadline := time.Now().Add(patience)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	r := &appendRequest{ctx: ctx, sessionID: sessionID, fn: fn, looksUp: looksUp, patience: patience,
		deadline: deadline, done: make(chan appendResult, 1)}
	a := d.appends
	a.enqueue(r)
	for {
		a.tryLead()
		var res appendResult
		select {
		case res = <-r.done:
		case <-a.handoff:
			continue
		case <-ctx.Done():
			if a.dequeue(r) {
				return ctx.Err()
			}
			res = <-r.done // already in a batch: wait for it
		}
		err := res.deliver()
		if err == nil {
			d.changes.Changed() // this handle's watchers, whichever way the answer came
		}
		return err
	}
}

func (res appendResult) deliver() error {
	if res.panicked != nil {
		panic(res.panicked) // the caller's panic, after its changes were undone
	}
	return res.err
}

func (a *appender) enqueue(r *appendRequest) {
	a.qmu.Lock()
	a.queue = append(a.queue, r)
	a.qmu.Unlock()
}

func (a *appender) dequeue(r *appendRequest) bool {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if i := slices.Index(a.queue, r); i >= 0 {
		a.queue = slices.Delete(a.queue, i, i+1)
		return true
	}
	return false
}

// takeQueue takes the queued requests whose session no batch in flight
// holds, and marks their sessions in flight.
func (a *appender) takeQueue() (batch []*appendRequest) {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if len(a.inFlight) == 0 {
		batch, a.queue = a.queue, nil
	} else {
		keep := a.queue[:0]
		for _, r := range a.queue {
			if a.inFlight[r.sessionID] > 0 {
				keep = append(keep, r)
			} else {
				batch = append(batch, r)
			}
		}
		clear(a.queue[len(keep):])
		a.queue = keep
	}
	for _, r := range batch {
		a.inFlight[r.sessionID]++
	}
	return batch
}

// takeable reports whether a queued request's session is in no batch
// in flight.
func (a *appender) takeable() bool {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	for _, r := range a.queue {
		if a.inFlight[r.sessionID] == 0 {
			return true
		}
	}
	return false
}

// landed marks a batch's sessions no longer in flight: the requests of
// batch that were run aside when aside, else the others (runAside lands
// its own, when they are answered).
func (a *appender) landed(batch []*appendRequest, aside bool) {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	for _, r := range batch {
		if r.aside != aside {
			continue
		}
		if a.inFlight[r.sessionID]--; a.inFlight[r.sessionID] <= 0 {
			delete(a.inFlight, r.sessionID)
		}
	}
}

func (a *appender) queueLen() int {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	return len(a.queue)
}

// tryLead runs one batch when a slot is free, then wakes a waiter to
// lead the next when requests queued meanwhile.
func (a *appender) tryLead() {
	select {
	case a.leaders <- struct{}{}:
	default:
		return
	}
	if a.takeable() {
		a.gather()
	}
	batch := a.takeQueue()
	if len(batch) == 0 {
		// What is queued waits for its session's batch in flight, whose
		// leader wakes a waiter when it lands: waking one now would only
		// spin.
		<-a.leaders
		return
	}
	a.lastBatch.Store(int64(len(batch)))
	a.runBatch(slices.Clone(batch), false)
	a.landed(batch, false)
	<-a.leaders
	a.wakeWaiter()
}

// wakeWaiter wakes a queued caller to lead the next batch, when requests
// are queued.
func (a *appender) wakeWaiter() {
	if a.queueLen() > 0 {
		select {
		case a.handoff <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// runAside queues appends whose session another transaction holds (a
// long transaction, another process's batch) for a goroutine that runs
// them in transactions of their own, waiting for the row locks within
// each caller's patience, so that the leader's batches go on without
// them. One such goroutine at a time: it holds one pool connection.
//
// The appends stay in flight until they are answered, counted for their
// sessions by this goroutine instead of their leader: the leader's next
// batches take no append of a session still waiting aside (each would be
// skipped and sent aside in turn), and a waiter is woken when they land.
func (a *appender) runAside(held []*appendRequest) {
	a.asides.Add(int64(len(held)))
	a.qmu.Lock()
	if a.halted {
		for _, r := range held {
			r.aside = true // landed below, not by the leader
		}
		a.qmu.Unlock()
		finishAppends(held, appendResult{err: driver.ErrClosed})
		a.landed(held, true)
		return
	}
	for _, r := range held {
		r.aside = true
	}
	a.aside = append(a.aside, held...)
	start := !a.asideRunning
	if start {
		a.asideRunning = true
		a.asideDone.Add(1) // before halted can be set: close's Wait sees it
	}
	a.qmu.Unlock()
	if !start {
		return
	}
	go func() {
		defer a.asideDone.Done()
		for {
			a.qmu.Lock()
			batch := a.aside
			a.aside = nil
			if len(batch) == 0 {
				a.asideRunning = false
				a.qmu.Unlock()
				return
			}
			a.qmu.Unlock()
			a.runBatch(slices.Clone(batch), true)
			a.landed(batch, true)
			a.wakeWaiter()
		}
	}()
}

// heldElsewhere lists the requests whose session exists but was not
// locked: another transaction holds its row.
func heldElsewhere(batch []*appendRequest, locked, exist map[string]bool) (held []*appendRequest) {
	for _, r := range batch {
		if exist[r.sessionID] && !locked[r.sessionID] {
			held = append(held, r)
		}
	}
	return held
}

// gatherWait bounds how long a leader waits for the last batch's callers
// to queue again (db/tx.go's gatherWait, for the same reason: the first
// caller back would otherwise lead a batch of one while the others queue
// behind it).
const gatherWait = 50 * time.Microsecond

func (a *appender) gather() {
	last := int(a.lastBatch.Load())
	if last < 2 || a.queueLen() == 0 {
		return
	}
	deadline := time.Now().Add(gatherWait)
	for a.queueLen() < last && time.Now().Before(deadline) {
		runtime.Gosched()
	}
}

// sessionsLookingUpAlike are the sessions of which two appends of batch
// look up the same key or platform id: the second must find what the
// first inserts, so they run in order.
func sessionsLookingUpAlike(batch []*appendRequest) map[string]bool {
	alike := map[string]bool{}
	seen := map[[2]string]bool{}
	for _, r := range batch {
		for _, name := range slices.Compact(slices.Sorted(slices.Values(r.looksUp))) {
			k := [2]string{r.sessionID, name}
			if seen[k] {
				alike[r.sessionID] = true
			}
			seen[k] = true
		}
	}
	return alike
}

// carefulAfterFailure is how many batches run with a savepoint per caller
// after a caller of a batch without them failed (db/tx.go's rule: where
// callbacks often fail, a batch run twice costs more than savepoints).
const carefulAfterFailure = 64

// runBatch runs the batch in transactions until every request has its
// outcome.
//
// The leader's batches (aside false) run without savepoints unless a
// recent batch had a failing caller; runAside's (aside true) always run
// careful: they are the rare batches that waited for a lock.
func (a *appender) runBatch(batch []*appendRequest, aside bool) {
	careful := aside
	if !aside && a.careful.Load() > 0 {
		careful = true
		a.careful.Add(-1)
	}
	var lastErr error // why the last transaction was rolled back
	for attempt := 0; len(batch) > 0; attempt++ {
		if batch = dropEnded(batch); len(batch) == 0 {
			return
		}
		if a.eng.closed.Load() {
			finishAppends(batch, appendResult{err: driver.ErrClosed})
			return
		}
		if lastErr != nil {
			batch = a.expire(batch, lastErr)
			if len(batch) == 0 {
				return
			}
			if a.pause(backoff(attempt-1), earliest(batch)) != nil {
				continue // someone's patience ends first, or Close came: expire them, or answer ErrClosed
			}
		}
		replay, err, undone := a.attempt(batch, careful, aside)
		if undone {
			careful = true
			if !aside {
				a.careful.Store(carefulAfterFailure)
			}
		}
		if err != nil {
			a.reruns.Add(1)
			lastErr = err
		}
		batch = replay
	}
}

// runPipelined runs the batch's appends on the pipeline, so that one
// round trip carries a statement of every lane (pipeline.go) and the
// round's statements share (pipeshare.go). Each append has a lane of its
// own — appends of one session that look up nothing in common commute
// (driver.Appender) — but where two appends of a session look up the
// same key, that session's appends that look up share one lane, in
// order. A session the batch could not lock is missing: its append will
// fail, so it runs after the others, in a savepoint. Any failure on the
// pipeline aborts the transaction: then everyone runs again, careful
// (undone), or, when the server rolled back for a reason a rerun may
// cure, as they were (err).
//
// The appends' INSERTs and counter updates ride the COMMIT's round
// (deferred.go), and come back in riding, unless a missing session's
// append runs after the lanes.
func (a *appender) runPipelined(ctx context.Context, c *pgx.Conn, batch []*appendRequest, locked map[string]bool) (ok, replay []*appendRequest, err error, undone bool, riding *commitRiders) {
	lanes, missing, crowded := planLanes(batch, locked)
	runs, errs := laneRuns(ctx, lanes)
	p := runLanes(ctx, c, runs, crowded, len(missing) == 0)
	if aborted(c) && !slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		return nil, batch, nil, true, nil // a callback hid a failed statement: find whose, careful
	}
	for _, e := range errs {
		if e != nil && (c.IsClosed() || wholeTransaction(e)) {
			return nil, batch, lostOr(c, e), false, nil
		}
	}
	for _, e := range errs {
		if e != nil {
			return nil, batch, nil, true, nil
		}
	}
	if p.riderFailed { // an append went on past a rider that failed
		return nil, batch, nil, true, nil
	}
	for _, reqs := range lanes {
		ok = append(ok, reqs...)
	}
	if len(missing) == 0 {
		return ok, nil, nil, false, p.takeRiders()
	}
	more, replay, err := a.runOneByOne(ctx, c, missing, true)
	if len(replay) > 0 {
		return nil, slices.Concat(ok, replay), err, false, nil
	}
	return append(ok, more...), nil, nil, false, nil
}

// planLanes gives each append of batch a lane (runPipelined says which
// share one), and returns the appends whose session is not in locked
// (nil: every session is) and the sessions with several lanes.
func planLanes(batch []*appendRequest, locked map[string]bool) (lanes [][]*appendRequest, missing []*appendRequest, crowded map[string]bool) {
	inOrder := sessionsLookingUpAlike(batch)
	lane := map[string]int{}    // the one lane of such a session's appends that look up
	lanesOf := map[string]int{} // how many lanes each session has
	for _, r := range batch {
		if locked != nil && !locked[r.sessionID] {
			missing = append(missing, r)
			continue
		}
		i, seen := lane[r.sessionID]
		together := len(r.looksUp) > 0 && inOrder[r.sessionID]
		if !together || !seen {
			i = len(lanes)
			lanes = append(lanes, nil)
			lanesOf[r.sessionID]++
			if together {
				lane[r.sessionID] = i
			}
		}
		lanes[i] = append(lanes[i], r)
	}
	crowded = map[string]bool{}
	for sid, n := range lanesOf {
		if n > 1 {
			crowded[sid] = true
		}
	}
	return lanes, missing, crowded
}

// laneRuns are the lanes' functions for runLanes: each runs its appends'
// callbacks in order, on the pipeline, until one fails; errs[i] is lane
// i's failure once runLanes returns.
func laneRuns(ctx context.Context, lanes [][]*appendRequest) (runs []func(*pipeline), errs []error) {
	errs = make([]error, len(lanes))
	runs = make([]func(*pipeline), len(lanes))
	for i, reqs := range lanes {
		runs[i] = func(p *pipeline) {
			ex := pgExecutor{executor: executor{q: queries, db: p}}
			for _, r := range reqs {
				ferr, panicked := runAppend(ctx, r, ex)
				if panicked != nil {
					ferr = fmt.Errorf("panic: %v", panicked) // answered when it runs again, careful
				}
				if ferr != nil {
					errs[i] = ferr
					return
				}
			}
		}
	}
	return runs, errs
}

// runAppend runs r's callback and catches its panic, so the batch can
// undo its changes before re-raising it in the caller. The callback gets
// the caller's values but not its cancellation, which would cut the
// shared transaction short; the batch's timeouts bound it instead.
func runAppend(ctx context.Context, r *appendRequest, ex driver.Executor) (err error, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	cctx, cancel := context.WithDeadline(context.WithoutCancel(r.ctx), deadlineOf(ctx))
	defer cancel()
	return r.fn(cctx, ex), nil
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// wholeTransaction reports an error after which the server keeps nothing
// of the transaction and a rerun may succeed: a serialization failure or
// deadlock (retryable), or a lock or statement timeout — the batch's
// least patient caller's budget, which others may still have.
func wholeTransaction(err error) bool {
	switch sqlState(err) {
	case stateLockNotAvailable, stateQueryCanceled:
		return true
	}
	return retryable(err)
}

// lostOr marks err a lost connection's when the connection is gone.
func lostOr(c *pgx.Conn, err error) error {
	if c.IsClosed() {
		return &lostBeforeCommit{err}
	}
	return err
}

// expire answers the requests whose patience ran out while their batch
// was rolled back and run again: ErrLocked with the last cause (a lock
// held elsewhere, a server that did not answer or restarts). Nothing of
// theirs was committed, so a caller may resend.
func (a *appender) expire(batch []*appendRequest, cause error) []*appendRequest {
	now := time.Now()
	keep := batch[:0]
	for _, r := range batch {
		if now.Before(r.deadline) {
			keep = append(keep, r)
			continue
		}
		// The caller's own deadline came first: it is told so in its
		// context's terms, even before the context's timer has fired
		// (on a loaded machine it lags the clock).
		if d, ok := r.ctx.Deadline(); ok && !now.Before(d) {
			r.respond(appendResult{err: fmt.Errorf("%w (nothing was written)", context.DeadlineExceeded)})
			continue
		}
		if lost, ok := cause.(*lostBeforeCommit); ok {
			cause = lost.err
		}
		a.eng.lockTimeouts.Add(1)
		r.respond(appendResult{err: &LockedError{Schema: a.eng.schema, Patience: r.patience, Err: cause}})
	}
	return keep
}

// dropEnded answers the requests whose callers gave up.
func dropEnded(batch []*appendRequest) []*appendRequest {
	keep := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.respond(appendResult{err: err})
			continue
		}
		keep = append(keep, r)
	}
	return keep
}

func finishAppends(batch []*appendRequest, res appendResult) {
	for _, r := range batch {
		r.respond(res)
	}
}

func earliest(batch []*appendRequest) time.Time {
	t := batch[0].deadline
	for _, r := range batch[1:] {
		if r.deadline.Before(t) {
			t = r.deadline
		}
	}
	return t
}

func latest(batch []*appendRequest) time.Time {
	t := batch[0].deadline
	for _, r := range batch[1:] {
		t = maxTime(t, r.deadline)
	}
	return t
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// pause sleeps d before a batch runs again (tx.go's sleep, Write's too),
// ending early at limit (the least patient caller's) or when Close halts
// the appender; it returns nil when it slept the whole d.
func (a *appender) pause(d time.Duration, limit time.Time) error {
	ctx, cancel := context.WithDeadline(a.stop, limit)
	defer cancel()
	return sleep(ctx, d)
}
