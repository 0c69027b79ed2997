package db

import "github.com/sessiondb/sessiondb/metrics"

var _ metrics.Source = (*Store)(nil)

// Metrics returns the Store's counters in the engines' common shape, for
// an exporter (see package metrics and the module
// github.com/sessiondb/sessiondb/metrics/prometheus). It reads Stats, so
// it costs what Stats costs: one small read of the index queue.
func (s *Store) Metrics() metrics.Snapshot {
	st := s.Stats()
	m := metrics.Snapshot{
		Engine:           "sqlite",
		MessagesAppended: s.MessagesAppended(),
		WritesCommitted:  st.WritesCommitted,
		Transactions:     st.Transactions,
		Reruns:           st.BatchReplays,
		HasLockWait:      true,
		LockRetries:      st.LockRetries,
		LockWait:         st.LockWait,
		LockTimeouts:     st.PatienceExhausted,
		HasIndexLag:      true,
		IndexQueued:      st.IndexQueued,
		IndexLag:         st.IndexLag,
		HasWAL:           true,
		WALBytes:         st.WALBytes,
		Pool: metrics.PoolStats{
			MaxOpen:      int64(st.ReadPool.MaxOpenConnections),
			InUse:        int64(st.ReadPool.InUse),
			Idle:         int64(st.ReadPool.Idle),
			WaitCount:    st.ReadPool.WaitCount,
			WaitDuration: st.ReadPool.WaitDuration,
		},
	}
	if s.w != nil {
		m.CommitDuration = s.w.commitDuration.Snapshot()
	}
	return m
}
