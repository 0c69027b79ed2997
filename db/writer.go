package db

// The Store's writer: its one read-write connection and the state around
// it (the sticky halt, the counters Stats reports), reads for stores
// without a read pool, and close. Writes go through tx.go.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/internal/flock"
)

// writer owns the Store's one read-write connection. Every use of conn
// happens with mu held: a read on the connection without it would run
// inside whatever batch is open there, seeing (and racing) writes that
// batch may still roll back.
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
	// migration is what Open's migrate step did to the file (zero under
	// Options.NoMigrate); set before the writer is shared, never changed.
	migration Migration
	// vfs is Options.VFS ("" is the driver's own): set at open, read by
	// stampDue.
	// +checklocks:mu
	vfs string
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
	lastBatch int
	// carefulBatches counts down the batches left to run in savepoints
	// after a caller failed (runCallbacks).
	// +checklocks:mu
	carefulBatches int
	// relaxedSync is set while the connection commits with
	// synchronous=NORMAL, for an indexer transaction (indexsync.go).
	// +checklocks:mu
	relaxedSync bool
	afterCommit func() error // replaces maintenance in tests

	// restarting is set while a WAL restart runs in the background.
	restarting atomic.Bool
	// spaceShortSince is when a write or an index slice last found the
	// disk full (Unix ns), 0 once one committed again (spaceshort.go).
	spaceShortSince atomic.Int64

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
	batchReplays        atomic.Uint64
	lockWaitNanos       atomic.Int64
	patienceExhausted   atomic.Uint64
	maintenanceRuns     atomic.Uint64
	maintenanceFailures atomic.Uint64
	walRestarts         atomic.Uint64
	strayTransactions   atomic.Uint64
	pin                 walPinWatch
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

// lockedError reports exhausted patience: who held the lock (where the OS
// can tell) and that the database itself is healthy. It is returned, not
// logged: the caller reports it, and a log line too would say it twice.
func (w *writer) lockedError(patience time.Duration, cause error) error {
	return &LockedError{Path: w.path, Patience: patience, Holders: flock.Holders(w.path), Err: cause}
}

// closeUnder closes the SQLite connection under conn after a statement
// panicked inside database/sql: conn.Close would wait forever for the
// connection that call never released (stmtcache.go). Its statements are
// finalized first (sqlite3_close refuses a connection that has any), and
// database/sql is left holding a closed connection nothing uses again.
func closeUnder(conn *sql.Conn) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return nil
		}
		raw := c.Raw()
		var stmts []*sqlite3.Stmt
		for st := range raw.Stmts() {
			stmts = append(stmts, st)
		}
		for _, st := range stmts {
			st.Close()
		}
		return raw.Close()
	})
}

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
	if w.tx.panicked.Load() {
		errs = append(errs, closeUnder(w.conn), w.pool.Close())
	} else {
		errs = append(errs, w.tx.close(), w.conn.Close(), w.pool.Close())
	}
	for _, f := range []*os.File{w.id.header, w.id.shm} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	if errors.Is(w.halted(), ErrReplaced) {
		w.id.retireWAL(w.path, w.log)
	}
	w.conn, w.tx, w.pool = nil, nil, nil
	return errors.Join(errs...)
}
