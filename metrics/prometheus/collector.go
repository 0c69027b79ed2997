package prometheus

import (
	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/sessiondb/sessiondb/metrics"
)

// Collector is a prometheus.Collector over a store (a *db.Store or a
// *pg.Store, or anything else that is a metrics.Source).
type Collector struct {
	src metrics.Source
}

var _ prom.Collector = (*Collector)(nil)

// NewCollector returns a Collector that reads src at every scrape.
func NewCollector(src metrics.Source) *Collector { return &Collector{src: src} }

func desc(name, help string, labels ...string) *prom.Desc {
	return prom.NewDesc("sessiondb_"+name, help, labels, nil)
}

// The metrics, named by Prometheus' conventions: base units (seconds,
// bytes) in the name, _total on counters. docs/METRICS.md says more.
var (
	infoDesc          = desc("store_info", "The store this process has open: 1, labelled by engine (sqlite or postgres).", "engine")
	appendsDesc       = desc("appends_total", "Messages acknowledged by append calls (a resend whose idempotency key was used counts again).")
	writesDesc        = desc("writes_total", "Write calls (appends, session changes, leases, ...) that committed.")
	batchesDesc       = desc("batches_total", "Write transactions committed: a group-commit batch carries every write that was waiting (SQLite: every write; PostgreSQL: plain appends, each other write is its own).")
	rerunsDesc        = desc("reruns_total", "Transactions rolled back and run again: SQLite group-commit batch replays; PostgreSQL serialization failures, deadlocks, lock waits past a batch's least patient caller and connections lost before COMMIT.")
	lockRetriesDesc   = desc("lock_retries_total", "Tries that met another connection's write lock (SQLite).")
	lockWaitDesc      = desc("lock_wait_seconds_total", "Time writes waited for the write lock (SQLite).")
	lockTimeoutsDesc  = desc("lock_timeouts_total", "Writes that gave up waiting within their patience (ErrLocked).")
	commitDesc        = desc("commit_duration_seconds", "Time COMMIT took, one per committed write transaction (SQLite: the fsync; PostgreSQL: the round trip and the server's WAL flush).")
	indexPendingDesc  = desc("index_pending_changes", "Changes waiting for the full-text index (SQLite, whose indexer runs behind the writes).")
	indexLagDesc      = desc("index_lag_seconds", "How long the oldest change waiting for the full-text index has waited (SQLite).")
	walBytesDesc      = desc("wal_size_bytes", "Size of the write-ahead log file now (SQLite).")
	poolMaxDesc       = desc("pool_max_connections", "The connection pool's bound (SQLite: the read pool; PostgreSQL: the pool for reads and writes; 0: unbounded).")
	poolConnsDesc     = desc("pool_connections", "The connection pool's connections now, by state (in_use, idle).", "state")
	poolWaitsDesc     = desc("pool_waits_total", "Connection acquires that found none idle and waited.")
	poolWaitTotalDesc = desc("pool_wait_seconds_total", "Time spent acquiring connections (SQLite: waits alone; PostgreSQL: every acquire).")
)

// Describe sends every metric's description; Collect sends the ones the
// store's engine has (SQLite's lock waits, index lag and WAL size are
// absent on PostgreSQL).
func (c *Collector) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{infoDesc, appendsDesc, writesDesc, batchesDesc, rerunsDesc,
		lockRetriesDesc, lockWaitDesc, lockTimeoutsDesc, commitDesc, indexPendingDesc, indexLagDesc,
		walBytesDesc, poolMaxDesc, poolConnsDesc, poolWaitsDesc, poolWaitTotalDesc} {
		ch <- d
	}
}

// Collect reads one snapshot of the store and sends its metrics.
func (c *Collector) Collect(ch chan<- prom.Metric) {
	s := c.src.Metrics()
	counter := func(d *prom.Desc, v float64) { ch <- prom.MustNewConstMetric(d, prom.CounterValue, v) }
	gauge := func(d *prom.Desc, v float64, labels ...string) {
		ch <- prom.MustNewConstMetric(d, prom.GaugeValue, v, labels...)
	}
	gauge(infoDesc, 1, s.Engine)
	counter(appendsDesc, float64(s.MessagesAppended))
	counter(writesDesc, float64(s.WritesCommitted))
	counter(batchesDesc, float64(s.Transactions))
	counter(rerunsDesc, float64(s.Reruns))
	if s.HasLockWait {
		counter(lockRetriesDesc, float64(s.LockRetries))
		counter(lockWaitDesc, s.LockWait.Seconds())
	}
	counter(lockTimeoutsDesc, float64(s.LockTimeouts))
	ch <- commitHistogram(s.CommitDuration)
	if s.HasIndexLag {
		gauge(indexPendingDesc, float64(s.IndexQueued))
		gauge(indexLagDesc, s.IndexLag.Seconds())
	}
	if s.HasWAL {
		gauge(walBytesDesc, float64(s.WALBytes))
	}
	gauge(poolMaxDesc, float64(s.Pool.MaxOpen))
	gauge(poolConnsDesc, float64(s.Pool.InUse), "in_use")
	gauge(poolConnsDesc, float64(s.Pool.Idle), "idle")
	counter(poolWaitsDesc, float64(s.Pool.WaitCount))
	counter(poolWaitTotalDesc, s.Pool.WaitDuration.Seconds())
}

// commitHistogram turns the engine's buckets (each counting its own
// range) into Prometheus' cumulative ones.
func commitHistogram(h metrics.HistogramSnapshot) prom.Metric {
	buckets := make(map[float64]uint64, len(metrics.DurationBounds))
	var cumulative uint64
	for i, bound := range metrics.DurationBounds {
		cumulative += h.Counts[i]
		buckets[bound.Seconds()] = cumulative
	}
	return prom.MustNewConstHistogram(commitDesc, h.Count(), h.Sum.Seconds(), buckets)
}
