package db

// Post-commit maintenance of the writer: checkpoints and full-text index
// merges, run after a batch's COMMIT (never inside it), so a failure
// here can never fail or replay the write it follows.

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// maintain runs post-commit maintenance: a checkpoint (see checkpoint)
// every checkpointEvery batches, and a bounded FTS merge every mergeEvery
// batches that added index segments (segments: the indexer's slices; an
// append writes nothing to the indexes, and the few segments a delete or rewind of
// indexed rows adds are left to FTS5's own automerge). It counts batches,
// not writes, because a group commit writes the WAL and the index once for
// all of its writes. It runs after COMMIT, so it can never fail or replay
// the write it follows: errors and panics are logged and counted, never
// returned. A WAL restart, which may wait seconds for readers, runs in the
// background instead (see restartWAL), so the caller that led the batch
// is not held up.
func (w *writer) maintain(segments bool) {
	step := w.afterCommit
	if step == nil {
		checkpoint := w.wal && w.checkpointEvery > 0 && due(&w.sinceCheckpoint, w.checkpointEvery)
		// No merge while the disk is full: it rewrites up to
		// ftsMergePages pages, space the writes need first (spaceshort.go).
		merge := segments && w.mergeEvery > 0 && !w.ftsOff.Load() && !w.standingAside(time.Now()) && due(&w.sinceMerge, w.mergeEvery)
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

// due counts one more committed batch and reports (resetting the count)
// when every of them have passed.
func due(counter *atomic.Uint64, every uint64) bool {
	if counter.Add(1) < every {
		return false
	}
	counter.Store(0)
	return true
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
	// Halted before the lock is released: a write waiting for it must not
	// commit after a failed fsync (syncfailure.go).
	return restart, w.haltOnSyncFailure(errors.Join(errs...))
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
