package db

// logsync.go acknowledges writes once the log holding them is on the disk,
// off the writer connection.
//
// In WAL mode the writer commits every batch with synchronous=NORMAL:
// SQLite appends the frames and makes them visible, with no fsync. A
// caller is acknowledged only after an fsync of the WAL that began after
// its COMMIT returned, made through the logSync's own connection to the
// file (fsync makes every write made to the file before it durable,
// whichever descriptor made it). With no other write waiting it is made at
// once, by the writer, as synchronous=FULL would have made it. With
// writes waiting the writer hands the batch to the logSync goroutine and
// leads the next batch at once, so one batch's fsync runs while the next
// one's statements do: at 64 appenders the writer had spent about half of
// its time waiting for the disk with the CPU idle (docs/PERFORMANCE.md).
// One fsync acknowledges every batch committed while the one before ran.
//
// Three rules keep every acknowledgement true:
//
//   - Every caller batch waits for an fsync, even one that wrote nothing
//     (a retried append found by its idempotency key): what it read may be
//     another connection's commit that is visible and not yet durable. A
//     batch made only of the indexer's slices writes derived rows and is
//     answered at COMMIT (indexsync.go).
//   - A failed fsync halts the Store (syncfailure.go); every batch still
//     waiting, and every one after, gets ErrCommitUnknown, since no later
//     fsync proves anything about the pages the failed one dropped.
//   - No checkpoint runs while an fsync is owed (quiesce): a checkpoint
//     copies the log into the main file and must not trust frames whose
//     fsync failed unseen.
//
// What it gives up: a reader (in this process or another) can see a
// message for up to one fsync before its append is acknowledged, and a
// power cut inside that window takes it back — as if the append had
// failed. Its caller never heard it succeed, and retries exactly once
// with the same idempotency key.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/vfs"
)

// logSync owns a connection to the database that never writes: its WAL
// file handle is what it fsyncs. Only the writer hands it batches, with
// the writer lock held.
type logSync struct {
	pool  *sql.DB
	conn  *sql.Conn
	file  vfs.File
	flags vfs.SyncFlag

	mu sync.Mutex
	// +checklocks:mu
	pending []*request
	// +checklocks:mu
	busy bool // a sync is running
	// +checklocks:mu
	stopped bool
	wake    *sync.Cond // pending grew or stopped was set
	idle    *sync.Cond // pending is empty and no sync runs
	done    chan struct{}

	deferred atomic.Uint64 // fsyncs made by the goroutine (tests)
	// skip, set by tests in this package only, acknowledges without the
	// fsync: the power-loss test must then find acknowledged rows lost.
	skip atomic.Bool
}

// openLogSync opens the logSync's connection and its WAL handle. The WAL
// must exist (the writer's open made the file WAL and checkpointed it).
func openLogSync(ctx context.Context, path, vfsName string) (s *logSync, err error) {
	pool, err := openDB(path, kindLogSync, 1, vfsName)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			pool.Close()
		}
	}()
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("open log sync connection: %w", err)
	}
	s = &logSync{pool: pool, conn: conn, flags: vfs.SYNC_NORMAL, done: make(chan struct{})}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		s.flags = vfs.SYNC_FULL // F_FULLFSYNC, as the writer's fullfsync pragma asks
	}
	// Hand-written: a read of any page opens the connection's WAL handle
	// (SQLite opens it with the first read transaction); no query of ours
	// is this cheap.
	if _, err := conn.ExecContext(ctx, "SELECT 1 FROM sqlite_schema LIMIT 1"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("open log sync connection: %w", err)
	}
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		o, err := c.Raw().FileControl("main", sqlite3.FCNTL_JOURNAL_POINTER)
		if err != nil {
			return err
		}
		if s.file, ok = o.(vfs.File); !ok || s.file == nil {
			return fmt.Errorf("no WAL file open")
		}
		return nil
	})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("open log sync connection: %w", err)
	}
	s.wake = sync.NewCond(&s.mu)
	s.idle = sync.NewCond(&s.mu)
	return s, nil
}

// ack answers batch, just committed with synchronous=NORMAL: the
// indexer's requests at once, the callers' after an fsync — made here
// when nothing else is owed and no write waits, else by the goroutine.
// It runs with the writer lock held.
//
// +checklocks:w.mu
func (w *writer) ack(batch []*request) {
	synced := w.logSynced // by the WAL hook, inside this COMMIT
	w.logSynced = false
	callers := batch[:0:0]
	for _, r := range batch {
		if r.indexing {
			r.respond(result{})
			continue
		}
		// The disk had room for the commit: what the outcome tells
		// (noteSpace) is known now, under the writer lock.
		if r.outcome != nil {
			r.outcome(nil)
			r.outcome = nil
		}
		callers = append(callers, r)
	}
	if len(callers) == 0 {
		return
	}
	if synced {
		finish(callers, nil)
		return
	}
	s := w.sy
	s.mu.Lock()
	if s.busy || len(s.pending) > 0 || w.queued() {
		s.pending = append(s.pending, callers...)
		s.wake.Signal()
		s.mu.Unlock()
		return
	}
	s.mu.Unlock() // idle, and only the writer (holding its lock) adds work
	w.answer(callers, s.sync(w))
}

// sync fsyncs the WAL, counted in w's Stats.LogSyncs.
func (s *logSync) sync(w *writer) error {
	w.logSyncs.Add(1)
	if s.skip.Load() {
		return nil
	}
	return s.file.Sync(s.flags)
}

// answer gives batch the outcome of the fsync that followed its COMMIT.
func (w *writer) answer(batch []*request, err error) {
	if err != nil {
		err = w.haltSync(fmt.Errorf("sync the log: %w", err))
	} else if w.syncFailed.Load() {
		// Another fsync failed meanwhile: this one proves nothing about
		// the pages that one dropped (syncfailure.go).
		err = w.halted()
	}
	for _, r := range batch {
		if err != nil {
			r.respond(result{err: commitUnknown(err)})
		} else {
			r.respond(result{})
		}
	}
}

func (w *writer) runLogSync(s *logSync) {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.pending) == 0 && !s.stopped {
			s.wake.Wait()
		}
		if len(s.pending) == 0 { // stopped, nothing owed
			s.mu.Unlock()
			return
		}
		batch := s.pending
		s.pending, s.busy = nil, true
		s.mu.Unlock()
		s.deferred.Add(1)
		w.answer(batch, s.sync(w))
		s.mu.Lock()
		s.busy = false
		if len(s.pending) == 0 {
			s.idle.Broadcast()
		}
		s.mu.Unlock()
	}
}

// quiesce waits until every handed batch is answered. With the writer
// lock held nothing new is handed meanwhile, so the log owes no fsync
// until the lock is released: what a checkpoint or a close needs.
func (s *logSync) quiesce() {
	if s == nil {
		return
	}
	s.mu.Lock()
	for s.busy || len(s.pending) > 0 {
		s.idle.Wait()
	}
	s.mu.Unlock()
}

// syncLogInCommit makes, from inside a COMMIT (the WAL hook, before the
// automatic checkpoint), the fsync that acknowledges the batch committing:
// it is durable before the checkpoint starts, whatever the checkpoint's
// own fsyncs meet, and ack answers it without another.
//
// checklocks cannot see that the WAL hook runs inside the writer's
// COMMIT, with the writer lock held by the batch leader.
// +checklocksignore
func (w *writer) syncLogInCommit() error {
	s := w.sy
	if s == nil { // synchronous=FULL: the COMMIT made it
		return nil
	}
	s.quiesce()
	if err := s.sync(w); err != nil {
		return w.haltSync(fmt.Errorf("sync the log: %w", err))
	}
	w.logSynced = true
	return nil
}

// close answers what is owed, ends the goroutine and closes the
// connection (before the writer's: the last connection to close
// checkpoints, and the writer decides whether that may happen).
func (s *logSync) close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.stopped = true
	s.wake.Signal()
	s.mu.Unlock()
	<-s.done
	return errors.Join(s.conn.Close(), s.pool.Close())
}
