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
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"

	"github.com/sessiondb/sessiondb/db/gen"
)

// txFunc is a write callback. It runs inside an open IMMEDIATE transaction
// and must not commit, roll back or keep tx. It is replayed only after a
// lock error rolled its transaction back, so it must be a pure function of
// its inputs and the database (no side effects outside tx).
type txFunc func(ctx context.Context, tx gen.DBTX) error

// writer owns the Store's one read-write connection. Every use of conn
// happens with mu held (seed 004: an unlocked read on the shared writer
// connection raced a batch write and destroyed a turn).
type writer struct {
	mu sync.Mutex
	// +checklocks:mu
	conn *sql.Conn
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
	afterCommit     func() error // replaces maintenance in tests

	writes              atomic.Uint64
	lockRetries         atomic.Uint64
	lockWaitNanos       atomic.Int64
	patienceExhausted   atomic.Uint64
	maintenanceFailures atomic.Uint64
}

// write runs fn in one IMMEDIATE transaction, waiting for another process's
// write lock for at most patience.
//
// Exactly-once: fn is replayed only after its transaction was rolled back —
// after a lock error (SQLite BUSY or LOCKED), or once, with indexing
// switched off in the same transaction, after the full-text index was
// found damaged (the data is fine). Any other error from fn rolls back
// and is returned; a panic in fn rolls back and is re-panicked; neither is
// ever replayed. A COMMIT whose outcome is unknown returns ErrCommitUnknown
// and is not retried.
func (w *writer) write(ctx context.Context, patience time.Duration, fn txFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	deadline := start.Add(patience)
	var ftsCause error // set once indexing is being switched off
	for try := 0; ; try++ {
		retry, err := w.attempt(ctx, deadline, fn)
		if err == nil {
			if try > 0 {
				w.lockWaitNanos.Add(int64(time.Since(start)))
			}
			if ftsCause != nil {
				w.ftsSwitchedOff(ftsCause)
			}
			w.maintain()
			return nil
		}
		if isFTSDamage(err) && ftsCause == nil {
			// The full-text index is damaged, not the data: replay the
			// (rolled back) write once with indexing switched off in the
			// same transaction, with the patience that is left.
			ftsCause = err
			inner := fn
			fn = func(ctx context.Context, tx gen.DBTX) error {
				if err := markFTSStale(ctx, tx); err != nil {
					return err
				}
				return inner(ctx, tx)
			}
			continue
		}
		if !retry {
			return err
		}
		w.lockRetries.Add(1)
		now := time.Now()
		if !now.Before(deadline) {
			w.lockWaitNanos.Add(int64(now.Sub(start)))
			w.patienceExhausted.Add(1)
			return w.lockedError(patience, err)
		}
		if err := sleepJitter(ctx, now.Sub(start), deadline.Sub(now)); err != nil {
			return err
		}
	}
}

// attempt makes one try. retry is true only when the transaction was rolled
// back (or never began) because of a lock error.
func (w *writer) attempt(ctx context.Context, deadline time.Time, fn txFunc) (retry bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == nil {
		return false, ErrClosed
	}
	if err := w.halted(); err != nil {
		return false, err
	}

	// The deadline bounds only the wait for the write lock: the driver's
	// busy handler gives up when this context ends, so patience is exact
	// whatever the connection's busy_timeout.
	beginCtx, cancel := context.WithDeadline(ctx, deadline)
	_, err = w.conn.ExecContext(beginCtx, "BEGIN IMMEDIATE")
	expired := beginCtx.Err() != nil
	cancel()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return false, ctx.Err()
		case isLockError(err), expired && errors.Is(err, sqlite3.INTERRUPT):
			return true, err
		}
		return false, w.classify(fmt.Errorf("begin: %w", err))
	}
	// Under the write lock, before anything is written: is this still
	// our file? Writing into a replaced one would lose the write.
	if err := w.id.checkFile(ctx, w.path, w.conn); err != nil {
		w.rollback()
		if errors.Is(err, ErrReplaced) {
			return false, w.stop(err)
		}
		return false, w.classify(err)
	}

	err, panicked := runCallback(ctx, fn, w.conn)
	if panicked != nil {
		w.rollback()
		panic(panicked) // the caller's panic, after its transaction is undone
	}
	if err != nil {
		w.rollback()
		return isLockError(err), w.classify(err)
	}
	// A cancelled caller must not interrupt COMMIT halfway: that would
	// turn a clean write into an unknown one.
	_, err = w.conn.ExecContext(context.WithoutCancel(ctx), "COMMIT")
	if err == nil {
		w.writes.Add(1)
		return false, nil
	}
	if w.inTransaction() {
		// COMMIT did not happen and the transaction is still open: undo
		// it; a lock error may then be replayed.
		w.rollback()
		return isLockError(err), w.classify(fmt.Errorf("commit: %w", err))
	}
	if errors.Is(err, sqlite3.IOERR) {
		// An I/O error may strike after the commit frame reached the
		// WAL: the write may or may not be durable.
		return false, fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	// SQLite rolled the transaction back itself (a constraint, a damaged
	// index, a full disk): nothing was committed.
	return false, w.classify(fmt.Errorf("commit: %w", err))
}

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
	if _, err := w.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil && w.inTransaction() {
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
	defer w.mu.Unlock()
	if w.conn == nil {
		return ErrClosed
	}
	return fn(w.conn)
}

// maintain runs post-commit maintenance: a PASSIVE checkpoint every
// checkpointEvery writes and a bounded FTS merge every mergeEvery writes.
// It runs after COMMIT, so it can never fail or replay the write it follows:
// errors and panics are logged and counted, never returned.
func (w *writer) maintain() {
	n := w.writes.Load()
	step := w.afterCommit
	if step == nil {
		checkpoint := w.wal && w.checkpointEvery > 0 && n%w.checkpointEvery == 0
		merge := w.mergeEvery > 0 && n%w.mergeEvery == 0 && !w.ftsOff.Load()
		if !checkpoint && !merge {
			return
		}
		step = func() error { return w.maintenance(checkpoint, merge) }
	}
	defer func() {
		if p := recover(); p != nil {
			w.maintenanceFailures.Add(1)
			w.log.Error("sessiondb: post-commit maintenance panicked; the write is committed", "path", w.path, "panic", p)
		}
	}()
	if err := step(); err != nil {
		if isFTSDamage(err) && !w.ftsOff.Load() {
			w.ftsSwitchedOff(err) // first, so the write below merges nothing
			_ = w.write(context.Background(), time.Second, markFTSStale)
		}
		w.maintenanceFailures.Add(1)
		w.log.Warn("sessiondb: post-commit maintenance failed; the write is committed", "path", w.path, "err", err)
	}
}

func (w *writer) maintenance(checkpoint, merge bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == nil || w.halted() != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := w.id.checkFile(ctx, w.path, w.conn); errors.Is(err, ErrReplaced) {
		return w.stop(err) // never merge or checkpoint into another file
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
			_, err := w.conn.ExecContext(ctx, stmt, ftsMergePages)
			errs = append(errs, err)
		}
	}
	if checkpoint {
		errs = append(errs, checkpointPassive(ctx, w.conn))
	}
	return errors.Join(errs...)
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
	defer w.mu.Unlock()
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
	} else if w.wal {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := checkpointPassive(ctx, w.conn); err != nil {
			w.log.Warn("sessiondb: close-time checkpoint failed", "path", w.path, "err", err)
		}
		cancel()
	}
	errs = append(errs, w.conn.Close(), w.pool.Close())
	if w.id.header != nil {
		errs = append(errs, w.id.header.Close())
	}
	if errors.Is(w.halted(), ErrReplaced) {
		w.id.retireWAL(w.path, w.log)
	}
	w.conn, w.pool = nil, nil
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
// can tell) and that the database itself is healthy.
func (w *writer) lockedError(patience time.Duration, cause error) error {
	holders := lockHolders(w.path)
	err := &LockedError{Path: w.path, Patience: patience, Holders: holders, Err: cause}
	w.log.Warn("sessiondb: write lock unavailable", "path", w.path, "patience", patience, "holders", holders)
	return err
}
