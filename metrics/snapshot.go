package metrics

import "time"

// Source is what an exporter reads: *db.Store and *pg.Store are Sources.
type Source interface {
	Metrics() Snapshot
}

// Snapshot is a store's counters since Open (counters only grow) and its
// state now (gauges). Reading one is cheap enough for every scrape; the
// SQLite engine reads the index queue from the file.
type Snapshot struct {
	// Engine is "sqlite" or "postgres".
	Engine string
	// MessagesAppended counts messages acknowledged by the append calls
	// (AppendMessage, AppendMessages, AppendMessagesUnderLease) of this
	// Store, a retried message whose idempotency key was used included.
	MessagesAppended uint64
	// WritesCommitted counts write calls (appends, session changes,
	// leases, ...) that committed.
	WritesCommitted uint64
	// Transactions counts the transactions that committed them: a
	// group-commit batch carries every write that was waiting (SQLite:
	// every write; PostgreSQL: plain appends, each other write is its
	// own), so Transactions ≤ WritesCommitted.
	Transactions uint64
	// Reruns counts transactions rolled back and run again: SQLite's
	// group-commit batch replays; PostgreSQL's serialization failures,
	// deadlocks, lock waits past an append batch's least patient caller
	// and connections lost before COMMIT.
	Reruns uint64
	// LockRetries counts tries that met another connection's write lock
	// and LockWait the time writes waited for it (SQLite; HasLockWait).
	HasLockWait bool
	LockRetries uint64
	LockWait    time.Duration
	// LockTimeouts counts writes that gave up waiting (ErrLocked).
	LockTimeouts uint64
	// CommitDuration is the time COMMIT took (the durable write: SQLite's
	// fsync, PostgreSQL's round trip and WAL flush), one per transaction.
	CommitDuration HistogramSnapshot
	// IndexQueued counts changes waiting for the full-text index and
	// IndexLag how long the oldest has waited (SQLite, whose indexer runs
	// behind the writes; HasIndexLag).
	HasIndexLag bool
	IndexQueued int64
	IndexLag    time.Duration
	// WALBytes is the size of SQLite's write-ahead log now (HasWAL).
	HasWAL   bool
	WALBytes int64
	// Pool is the connection pool: SQLite's read pool, PostgreSQL's pool
	// (reads and writes).
	Pool PoolStats
}

// PoolStats is a connection pool's state now and its waits since Open.
type PoolStats struct {
	MaxOpen int64 // the pool's bound (0: unbounded)
	InUse   int64
	Idle    int64
	// WaitCount counts acquires that found no idle connection and waited
	// for one, and WaitDuration the time acquires waited: on SQLite that
	// of the waits alone (database/sql), on PostgreSQL that of every
	// acquire (pgxpool's AcquireDuration).
	WaitCount    int64
	WaitDuration time.Duration
}
