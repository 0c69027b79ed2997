package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/db/internal/forensics"
	"github.com/sessiondb/sessiondb/internal/changefeed"
	"github.com/sessiondb/sessiondb/internal/flock"
	"github.com/sessiondb/sessiondb/store"
)

// queries is sqlc's stateless query set; every call names its connection.
var queries = gen.New()

// Store is an agent's conversation state in one SQLite file, safe for use by
// many goroutines and shared with other processes. Its domain verbs
// (CreateSession, AppendMessage, Search, ...) are package store's, the
// same on every engine, each a method here with its documentation; Path,
// Vacuum, IndexNow, Info and Stats are the file's own.
type Store struct {
	*store.Store
	*engine
}

// engine is the SQLite engine behind a Store: it implements
// driver.Driver. Writes go through one connection, one IMMEDIATE
// transaction per call (or per group commit); reads use a separate
// read-only pool and never touch the writer.
type engine struct {
	path    string
	opts    Options
	w       *writer // nil when opened with Options.ReadOnly
	readers *sql.DB // nil when the file is not in WAL mode
	// readStmts keeps the readers' prepared statements (readstmts.go).
	readStmts *readStmts
	// readOnly, when set, is why the store was opened for reading only:
	// there is no writer (w is nil), and every write returns it.
	readOnly error
	closed   atomic.Bool
	// snapshots counts the read transactions snapshot began: how tests
	// see that a long read is split into short ones.
	snapshots atomic.Uint64
	// changes wakes the store's watchers (watch.go).
	changes *changefeed.Hub
}

// Open opens (creating if needed) the database at path, applies pending
// migrations, and returns a Store ready for use.
//
// Open changes nothing at a path that does not hold a store: another
// program's SQLite database, a text file, a directory or a device is
// refused with a NotAStoreError (ErrNotAStore) before any file is
// created, chmod-ed, locked or migrated. An absent path, an empty file
// and an empty SQLite database become a store, unless
// Options.ExistingOnly or Options.ReadOnly says only to open one that is
// there. A new file is created 0600; an existing file keeps its mode, and
// the side files (-wal, -shm, the lock) get the database's mode and owner.
//
// Open waits out another process's lock (a migration, a VACUUM) for up to
// Options.OpenPatience. Errors that waiting cannot fix — a directory at the
// path, no permission, a file that is not a database — fail at once.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, opErr("open", "", err)
	}
	if path == "" {
		return nil, opErr("open", "", invalid("empty database path"))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, opErr("open", "", err)
	}
	// Before anything is created, chmod-ed, locked or migrated: a path
	// that holds something other than a store is left exactly as it was.
	state, err := inspectPath(ctx, abs, opts.VFS)
	if err != nil {
		return nil, opErr("open", "", err)
	}
	if opts.ReadOnly || opts.ExistingOnly {
		if err := refuseNoStore(abs, state); err != nil {
			return nil, opErr("open", "", err)
		}
	}
	if opts.ReadOnly {
		s, err := openReadOnly(ctx, abs, opts, errStoreReadOnly)
		return s, opErr("open", "", err)
	}
	if opts.NoMigrate && (state == pathAbsent || state == pathEmpty) {
		return nil, opErr("open", "", &SchemaBehindError{Where: abs, Want: latestMigration(),
			Reason: "there is no store there yet, and Options.NoMigrate forbids making one"})
	}
	created, err := prepareFile(abs)
	if err != nil {
		return nil, opErr("open", "", err)
	}
	if why := readOnlyReason(abs); why != nil {
		s, err := openReadOnly(ctx, abs, opts, why)
		return s, opErr("open", "", err)
	}
	if err := refuseAliased(abs); err != nil {
		return nil, opErr("open", "", err)
	}

	start := time.Now()
	openCtx, cancel := context.WithDeadline(ctx, start.Add(opts.OpenPatience))
	defer cancel()
	var w *writer
	for {
		w, err = openWriter(openCtx, abs, created, opts)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, opErr("open", "", ctx.Err())
		}
		lockish := isLockError(err) || errors.Is(err, context.DeadlineExceeded)
		if !lockish {
			return nil, opErr("open", "", describeOpenError(abs, err))
		}
		if openCtx.Err() != nil {
			return nil, opErr("open", "", &LockedError{Path: abs, Patience: opts.OpenPatience,
				Holders: flock.Holders(abs), Err: err})
		}
		if err := sleepJitter(openCtx, time.Since(start), time.Until(start.Add(opts.OpenPatience))); err != nil && ctx.Err() != nil {
			return nil, opErr("open", "", ctx.Err())
		}
	}
	// Again now that this store holds the file: an alias opened at the
	// same moment as this one was invisible to the first check.
	if err := refuseAliased(abs); err != nil {
		w.close()
		return nil, opErr("open", "", err)
	}
	alignSidecars(abs)
	if err := reconcileFTS(openCtx, w, time.Until(start.Add(opts.OpenPatience))); err != nil {
		w.close()
		return nil, opErr("open", "", fmt.Errorf("bring the full-text index up to date: %w", resourceCause(abs, err)))
	}

	s := &engine{path: abs, opts: opts, w: w}
	if w.wal {
		if s.readers, err = openDB(abs, kindReader, opts.ReadPoolSize, opts.VFS); err != nil {
			w.close()
			return nil, opErr("open", "", err)
		}
		w.pin.readers.Store(s.readers)
		s.readStmts = newReadStmts(s.readers)
	} else {
		opts.Logger.Warn("sessiondb: the filesystem refused WAL; running in rollback-journal mode with reads on the writer", "path", abs)
	}
	if !opts.ManualIndexing {
		w.startIndexer()
	}
	return s.store()
}

// store puts the domain in front of the engine.
func (e *engine) store() (*Store, error) {
	e.changes = changefeed.New(e.watchSource)
	st, err := store.New(sqliteDriver{e}, store.Options{WritePatience: e.opts.WritePatience,
		TranscriptPatience: e.opts.TranscriptPatience, ActivityPatience: e.opts.ActivityPatience,
		SpoolDir: filepath.Dir(e.path), Logger: e.opts.Logger})
	if err != nil {
		e.close()
		return nil, err
	}
	return &Store{Store: st, engine: e}, nil
}

// openWriter opens the writer, and under the cross-process migration lock
// switches the file to WAL and applies migrations, then pins the single
// writer connection.
func openWriter(ctx context.Context, path string, created bool, opts Options) (w *writer, err error) {
	ctx = sqlite3.WithMaxMemory(ctx, writerMaxMemory) // the connection is made with the first call's ctx (limits.go)
	pool, err := openDB(path, kindWriter, 1, opts.VFS)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			pool.Close()
		}
	}()
	lock, err := acquireFileLock(ctx, path+".migrate.lock", path)
	if err != nil {
		return nil, err
	}
	var wal bool
	var id identity
	var migration Migration
	err = func() error {
		defer lock.Release()
		if err := forensics.QuarantineTorn(path, opts.Logger); err != nil {
			return err
		}
		if _, _, err := forensics.RetireForeignWAL(path, opts.Logger); err != nil {
			return err
		}
		if err := initializeEmpty(path, created, opts.VFS); err != nil {
			return err
		}
		// The pool has one connection: each step takes it and gives it back
		// (goose takes it itself).
		c, err := pool.Conn(ctx)
		if err != nil {
			return err
		}
		wal, err = ensureWAL(ctx, c)
		c.Close()
		if err != nil {
			return err
		}
		if opts.NoMigrate {
			err = refuseBehind(ctx, pool, path)
		} else {
			migration.Where = path
			migration.From, migration.To, err = migrate(ctx, pool)
		}
		if err != nil {
			return err
		}
		if c, err = pool.Conn(ctx); err != nil {
			return err
		}
		id.appID, err = stampGeneration(ctx, c)
		if err == nil && wal {
			err = checkpointAtOpen(ctx, c)
		}
		if err == nil {
			id.schema, err = checkOpenSchema(ctx, c)
		}
		c.Close()
		if err != nil {
			return err
		}
		if id.file, err = os.Stat(path); err != nil {
			return err
		}
		id.wal, _ = os.Stat(path + "-wal") // absent when the file refused WAL
		return nil
	}()
	if err != nil {
		return nil, err
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if id.header, err = os.Open(path); err != nil {
		conn.Close()
		return nil, err
	}
	w = &writer{
		conn:            conn,
		tx:              newStmtCache(conn),
		pool:            pool,
		path:            path,
		wal:             wal,
		vfs:             opts.VFS,
		id:              id,
		log:             opts.Logger,
		mergeEvery:      uint64(max(opts.FTSMergeEvery, 0)),
		checkpointEvery: uint64(max(opts.CheckpointEvery, 0)),
		walBound:        cmp.Or(opts.walBound, walBoundBytes),
		gatherWait:      cmp.Or(opts.gatherWait, gatherWait),
		afterCommit:     opts.afterCommit,
		handoff:         make(chan struct{}, 1),
		migration:       migration,
	}
	w.watchAutoCheckpoint(conn)
	return w, nil
}

// describeOpenError adds the path and the fix to errors that waiting
// cannot cure.
func describeOpenError(path string, err error) error {
	err = resourceCause(path, err)
	switch {
	case errors.Is(err, ErrNotAStore):
		return err
	case errors.Is(err, ErrNotDatabase):
		return fmt.Errorf("%s cannot be read as a SQLite database (`sessiondb verify` tells a damaged store, which `sessiondb repair` mends, from another program's file, which it leaves alone): %w", path, err)
	case errors.Is(err, ErrReadOnly):
		return fmt.Errorf("%s cannot be written by this user (fix its permissions, e.g. chmod u+rw on the file and its directory, or open it with Options.ReadOnly to read it): %w", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the store; see engine.Close for what the SQLite engine
// does on the way. Calls after Close return ErrClosed; a second Close
// returns nil.
func (s *Store) Close() error { return s.Store.Close() }

// Close indexes the messages still queued for the full-text index (for up
// to 2 s), checkpoints (PASSIVE) and closes every connection. Rows it
// could not index in time (another process held the lock, a large
// backlog) stay queued — Search finds them all the same, and the next
// Open or any open store's indexer indexes them — and it logs how many.
// The domain (store.Store.Close) calls it once, through sqliteDriver.
func (s *engine) close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.changes.Close(ErrClosed)
	if s.w != nil { // a read-only store has no writer, and so no indexer
		s.closeIndexer()
	}
	var errs []error
	if s.readers != nil {
		errs = append(errs, s.readStmts.close(), s.readers.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.close())
	}
	return errors.Join(errs...)
}

// closeIndexer stops the background indexer and indexes what is queued,
// within closeIndexBudget, so a store closed cleanly leaves no queue.
func (s *engine) closeIndexer() {
	s.w.stopIndexer()
	if s.w.halted() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeIndexBudget)
		left, err := s.w.indexAll(ctx)
		cancel()
		if err != nil || left > 0 {
			s.opts.Logger.Warn("sessiondb: close left messages queued for the full-text index; Search still finds them and the next open indexes them",
				"path", s.path, "queued", left, "err", err)
		}
	}
}

// write runs fn as one write transaction with the given patience, for
// the engine's own verbs (the domain's come through Write).
func (s *engine) write(ctx context.Context, op, sessionID string, patience time.Duration, fn txFunc) error {
	return opErr(op, sessionID, s.writeTx(ctx, patience, fn))
}

// read runs fn on the read pool, or on the writer when there is no pool.
func (s *engine) read(ctx context.Context, op, sessionID string, fn func(gen.DBTX) error) error {
	return opErr(op, sessionID, s.readTx(ctx, fn))
}

// snapshot runs fn inside one read-only transaction (see snapshotTx).
func (s *engine) snapshot(ctx context.Context, op, sessionID string, fn func(gen.DBTX) error) error {
	return opErr(op, sessionID, s.snapshotTx(ctx, fn))
}

func (s *engine) writeTx(ctx context.Context, patience time.Duration, fn txFunc) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if s.w == nil {
		return s.readOnly
	}
	err := s.w.write(ctx, patience, fn)
	if err == nil {
		s.changes.Changed()
	}
	return s.cause(err)
}

func (s *engine) readTx(ctx context.Context, fn func(gen.DBTX) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	var err error
	if s.readers != nil {
		err = fn(s.readStmts.pool())
		s.readStmts.prepareWanted(ctx)
	} else {
		err = s.w.read(ctx, fn)
	}
	if err != nil && s.closed.Load() {
		err = ErrClosed
	}
	return s.cause(err)
}

// snapshotTx runs fn inside one read-only transaction on the read pool, so
// every statement of a multi-statement read (a lineage walk, conversation
// pages, an export) sees the same committed state. Without a pool it runs
// on the writer, where the writer's lock already keeps writes out.
func (s *engine) snapshotTx(ctx context.Context, fn func(gen.DBTX) error) error {
	if s.readers == nil {
		return s.readTx(ctx, fn)
	}
	if s.closed.Load() {
		return ErrClosed
	}
	s.snapshots.Add(1)
	tx, err := s.readers.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.cause(err)
	}
	defer s.readStmts.prepareWanted(ctx) // after the transaction gave its connection back
	defer tx.Rollback()
	if err := fn(s.readStmts.in(tx)); err != nil {
		if s.closed.Load() {
			err = ErrClosed
		}
		return s.cause(err)
	}
	return s.cause(tx.Commit())
}

// cause maps a driver error to the sentinels, naming the cause when the
// database's surroundings are to blame (a full disk, no descriptors left:
// see resourceCause).
func (s *engine) cause(err error) error {
	if err != nil && !s.closed.Load() {
		err = resourceCause(s.path, err)
	}
	return mapDriverError(err)
}

// now is the store's clock: Unix milliseconds, the one time representation
// in the schema.
func now() int64 { return time.Now().UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
