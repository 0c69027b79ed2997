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
// Exactly-once: fn is replayed only after a lock error (SQLite BUSY or
// LOCKED) rolled its transaction back. Any other error from fn rolls back
// and is returned; a panic in fn rolls back and is re-panicked; neither is
// ever replayed. A COMMIT whose outcome is unknown returns ErrCommitUnknown
// and is not retried.
func (w *writer) write(ctx context.Context, patience time.Duration, fn txFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	deadline := start.Add(patience)
	for try := 0; ; try++ {
		retry, err := w.attempt(ctx, deadline, fn)
		if err == nil {
			if try > 0 {
				w.lockWaitNanos.Add(int64(time.Since(start)))
			}
			w.maintain()
			return nil
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
		return false, fmt.Errorf("begin: %w", err)
	}

	err, panicked := runCallback(ctx, fn, w.conn)
	if panicked != nil {
		w.rollback()
		panic(panicked) // the caller's panic, after its transaction is undone
	}
	if err != nil {
		w.rollback()
		return isLockError(err), err
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
		return isLockError(err), fmt.Errorf("commit: %w", err)
	}
	// SQLite already ended the transaction: the outcome is unknown.
	return false, fmt.Errorf("%w: %w", ErrCommitUnknown, err)
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
		w.log.Error("sessiondb: rollback failed", "path", w.path, "err", err)
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
		merge := w.mergeEvery > 0 && n%w.mergeEvery == 0
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
		w.maintenanceFailures.Add(1)
		w.log.Warn("sessiondb: post-commit maintenance failed; the write is committed", "path", w.path, "err", err)
	}
}

func (w *writer) maintenance(checkpoint, merge bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
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
	if w.wal {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := checkpointPassive(ctx, w.conn); err != nil {
			w.log.Warn("sessiondb: close-time checkpoint failed", "path", w.path, "err", err)
		}
		cancel()
	}
	errs = append(errs, w.conn.Close(), w.pool.Close())
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
