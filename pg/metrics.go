package pg

import (
	"sync/atomic"

	"github.com/sessiondb/sessiondb/metrics"
)

var _ metrics.Source = (*Store)(nil)

// counters are what the engine counts for Metrics: atomics and a
// lock-free histogram, a few nanoseconds beside a write's round trips.
type counters struct {
	writes         atomic.Uint64     // Write's transactions committed (one per write; appends count in appender)
	reruns         atomic.Uint64     // Write's transactions run again (serialization, deadlock, lost connection)
	lockTimeouts   atomic.Uint64     // writes and appends that gave up with ErrLocked
	commitDuration metrics.Histogram // every COMMIT that committed: Write's and the append batches'
}

// Metrics returns the Store's counters in the engines' common shape, for
// an exporter (see package metrics and the module
// github.com/sessiondb/sessiondb/metrics/prometheus). It reads no table:
// the counters are this process's, the pool's figures pgxpool's.
func (s *Store) Metrics() metrics.Snapshot {
	c, a := &s.eng.counters, s.eng.appends
	writes := c.writes.Load()
	ps := s.eng.pool.Stat()
	return metrics.Snapshot{
		Engine:           "postgres",
		MessagesAppended: s.MessagesAppended(),
		// Plain appends go through the append batches (appendbatch.go),
		// every other write through Write, one transaction each.
		WritesCommitted: writes + uint64(a.appends.Load()),
		Transactions:    writes + uint64(a.batches.Load()),
		Reruns:          c.reruns.Load() + uint64(a.reruns.Load()),
		LockTimeouts:    c.lockTimeouts.Load(),
		CommitDuration:  c.commitDuration.Snapshot(),
		Pool: metrics.PoolStats{
			MaxOpen:      int64(ps.MaxConns()),
			InUse:        int64(ps.AcquiredConns()),
			Idle:         int64(ps.IdleConns()),
			WaitCount:    ps.EmptyAcquireCount(),
			WaitDuration: ps.AcquireDuration(),
		},
	}
}
