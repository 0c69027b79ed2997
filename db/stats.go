package db

import (
	"context"
	"database/sql"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/db/internal/forensics"
)

// Stats are the Store's counters since Open, cheap enough to poll.
type Stats struct {
	// WritesCommitted counts writes (calls) that committed.
	WritesCommitted uint64
	// Transactions counts the transactions (and fsyncs) that committed
	// them: under group commit one transaction carries every write that
	// was waiting, so Transactions ≤ WritesCommitted.
	Transactions uint64
	// LockRetries counts tries that met another connection's lock.
	LockRetries uint64
	// BatchReplays counts group-commit batches rolled back under their
	// callbacks so that their writes ran again in a new transaction (their
	// first run's changes were undone; each still commits once): by
	// SQLite — one caller's statement interrupted by its context, or one
	// that rolls back the whole transaction (OR ROLLBACK, a full disk);
	// the other writes run again — or by the store, when a caller failed
	// in a batch run without a savepoint for each caller (the common case,
	// until one fails: then the next 64 transactions have them); every
	// write runs again, the failing one too.
	BatchReplays uint64
	// LockWait is the total time writes spent waiting for the write lock.
	LockWait time.Duration
	// PatienceExhausted counts writes that gave up with ErrLocked.
	PatienceExhausted uint64
	// MaintenanceRuns counts post-commit maintenance steps (PASSIVE
	// checkpoints, FTS merges, background WAL restarts) run.
	MaintenanceRuns uint64
	// MaintenanceFailures counts post-commit maintenance steps that failed
	// (logged; the writes they followed are committed).
	MaintenanceFailures uint64
	// WALRestarts counts RESTART checkpoints that started the WAL over
	// after it had grown past its bound (256 MiB): readers that always
	// overlap keep PASSIVE checkpoints from ever copying the whole log. A
	// steady rise says reads never pause; each restart held writes off
	// while the reads in flight finished (at most 3 s) and the rest of
	// the log was copied.
	WALRestarts uint64
	// WALRestartsOutlasted counts WAL restarts that gave up because a
	// reader kept its snapshot open through the whole wait: while that
	// goes on the log cannot start over and grows past its bound (see
	// WALBytes). A warning names the processes that may hold it.
	WALRestartsOutlasted uint64
	// WALBytes is the WAL file's size now (0 without one).
	WALBytes int64
	// StrayTransactions counts transactions found open on the writer
	// before a BEGIN or after a batch, and rolled back. Never expected
	// (see the error it logs); anything but 0 is a bug to report.
	StrayTransactions uint64
	// IndexQueued is how many changes wait for the full-text indexes
	// (made by any process; Search answers from the rows as they are all
	// the same): a message appended or edited, one deleted or edited
	// whose old text is still to be forgotten (a message edited twice
	// counts more than once). IndexLag is how long the longest-waiting of
	// them has waited: the background indexer's lag behind the writes (0
	// with none waiting). A new message counts from its created_at (its
	// append's own time), and from no earlier than the first append since
	// the indexer last caught up (an import's messages keep their old
	// times; migration 12). Both are read from the file when Stats is called
	// (zero if that read fails, as after Close).
	IndexQueued int64
	IndexLag    time.Duration
	// IndexSlices counts the indexer's transactions that applied changes,
	// and MessagesIndexed the changes they applied (neither counts in
	// WritesCommitted or Transactions). They are read before the queue:
	// a slice committing meanwhile is in neither until the next Stats.
	IndexSlices     uint64
	MessagesIndexed uint64
	// ReadPool is the read pool's database/sql statistics (zero without WAL).
	ReadPool sql.DBStats
}

// Stats returns the Store's counters.
func (s *Store) Stats() Stats {
	var st Stats
	if s.w != nil { // a read-only store has no writer and counts nothing
		st = Stats{
			WritesCommitted:      s.w.writes.Load(),
			Transactions:         s.w.transactions.Load(),
			LockRetries:          s.w.lockRetries.Load(),
			BatchReplays:         s.w.batchReplays.Load(),
			LockWait:             time.Duration(s.w.lockWaitNanos.Load()),
			PatienceExhausted:    s.w.patienceExhausted.Load(),
			MaintenanceRuns:      s.w.maintenanceRuns.Load(),
			MaintenanceFailures:  s.w.maintenanceFailures.Load(),
			WALRestarts:          s.w.walRestarts.Load(),
			WALRestartsOutlasted: s.w.pin.outlasted.Load(),
			StrayTransactions:    s.w.strayTransactions.Load(),
			IndexSlices:          s.w.ix.slices.Load(),
			MessagesIndexed:      s.w.ix.rows.Load(),
		}
	}
	st.WALBytes = forensics.WALSize(s.path)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.read(ctx, "stats", "", func(q gen.DBTX) error {
		state, err := queries.FTSPendingState(ctx, q)
		st.IndexQueued = state.Queued
		if err == nil && state.OldestQueuedAt > 0 {
			st.IndexLag = max(time.Since(time.UnixMilli(state.OldestQueuedAt)), 0)
		}
		return err
	})
	if s.readers != nil {
		st.ReadPool = s.readers.Stats()
	}
	return st
}
