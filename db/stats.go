package db

import (
	"database/sql"
	"time"
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
	// StrayTransactions counts transactions found open on the writer
	// before a BEGIN or after a batch, and rolled back. Never expected
	// (see the error it logs); anything but 0 is a bug to report.
	StrayTransactions uint64
	// ReadPool is the read pool's database/sql statistics (zero without WAL).
	ReadPool sql.DBStats
}

// Stats returns the Store's counters.
func (s *Store) Stats() Stats {
	if s.w == nil { // opened for reading only
		return Stats{ReadPool: s.readers.Stats()}
	}
	st := Stats{
		WritesCommitted:     s.w.writes.Load(),
		Transactions:        s.w.transactions.Load(),
		LockRetries:         s.w.lockRetries.Load(),
		LockWait:            time.Duration(s.w.lockWaitNanos.Load()),
		PatienceExhausted:   s.w.patienceExhausted.Load(),
		MaintenanceRuns:     s.w.maintenanceRuns.Load(),
		MaintenanceFailures: s.w.maintenanceFailures.Load(),
		WALRestarts:         s.w.walRestarts.Load(),
		StrayTransactions:   s.w.strayTransactions.Load(),
	}
	if s.readers != nil {
		st.ReadPool = s.readers.Stats()
	}
	return st
}
