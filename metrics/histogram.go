package metrics

import (
	"sync/atomic"
	"time"
)

// DurationBounds are the upper bounds of a Histogram's buckets, from half
// a millisecond (a commit with no fsync, a fast local server) to 10 s (a
// stalled disk): the same for every store, so dashboards can add them up.
var DurationBounds = [...]time.Duration{
	500 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond,
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2500 * time.Millisecond,
	5 * time.Second, 10 * time.Second,
}

// Histogram counts durations into DurationBounds' buckets without a lock:
// an observation is one scan of 14 bounds and two atomic adds, cheap
// beside the commit it times. The zero value is ready to use.
type Histogram struct {
	counts [len(DurationBounds) + 1]atomic.Uint64 // the last: above every bound
	sum    atomic.Int64                           // nanoseconds
}

// Observe counts one duration.
func (h *Histogram) Observe(d time.Duration) {
	i := 0
	for i < len(DurationBounds) && d > DurationBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

// HistogramSnapshot is a Histogram read at one moment.
type HistogramSnapshot struct {
	// Counts[i] counts durations ≤ DurationBounds[i] and above the bound
	// before it; the last counts those above every bound.
	Counts [len(DurationBounds) + 1]uint64
	Sum    time.Duration
}

// Count is how many durations were observed.
func (s HistogramSnapshot) Count() uint64 {
	var n uint64
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// Snapshot reads the histogram. Observations that land while it reads may
// be in its buckets and not yet in its sum, or the other way round.
func (h *Histogram) Snapshot() HistogramSnapshot {
	var s HistogramSnapshot
	for i := range h.counts {
		s.Counts[i] = h.counts[i].Load()
	}
	s.Sum = time.Duration(h.sum.Load())
	return s
}
