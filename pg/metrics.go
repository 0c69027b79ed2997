package pg

import (
	"sync/atomic"

	"github.com/sessiondb/sessiondb/metrics"
)

var _ metrics.Source = (*Store)(nil)

// counters are what the engine counts for Metrics: atomics and a
// lock-free histogram, a few nanoseconds beside a write's round trips.
type counters struct {
	writes         atomic.Uint64 // write transactions committed (one per write)
	reruns         atomic.Uint64 // transactions run again (serialization, deadlock, lost connection)
	lockTimeouts   atomic.Uint64 // writes that gave up with ErrLocked
	commitDuration metrics.Histogram
}

// Metrics returns the Store's counters in the engines' common shape, for
// an exporter (see package metrics and the module
// github.com/sessiondb/sessiondb/metrics/prometheus). It reads no table:
// the counters are this process's, the pool's figures pgxpool's.
func (s *Store) Metrics() metrics.Snapshot {
	c := &s.eng.counters
	writes := c.writes.Load()
	ps := s.eng.pool.Stat()
	return metrics.Snapshot{
		Engine:           "postgres",
		MessagesAppended: s.MessagesAppended(),
		WritesCommitted:  writes,
		Transactions:     writes,
		Reruns:           c.reruns.Load(),
		LockTimeouts:     c.lockTimeouts.Load(),
		CommitDuration:   c.commitDuration.Snapshot(),
		Pool: metrics.PoolStats{
			MaxOpen:      int64(ps.MaxConns()),
			InUse:        int64(ps.AcquiredConns()),
			Idle:         int64(ps.IdleConns()),
			WaitCount:    ps.EmptyAcquireCount(),
			WaitDuration: ps.AcquireDuration(),
		},
	}
}
