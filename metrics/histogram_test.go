package metrics_test

import (
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/metrics"
)

func TestHistogramBuckets(t *testing.T) {
	var h metrics.Histogram
	for _, d := range []time.Duration{0, 500 * time.Microsecond, 501 * time.Microsecond, 3 * time.Millisecond, time.Minute} {
		h.Observe(d)
	}
	s := h.Snapshot()
	want := map[int]uint64{0: 2, 1: 1, 3: 1, len(metrics.DurationBounds): 1}
	for i, c := range s.Counts {
		if c != want[i] {
			t.Errorf("bucket %d (≤ %v) = %d, want %d", i, bound(i), c, want[i])
		}
	}
	if s.Count() != 5 {
		t.Errorf("Count = %d, want 5", s.Count())
	}
	if wantSum := time.Minute + 3*time.Millisecond + 1001*time.Microsecond; s.Sum != wantSum {
		t.Errorf("Sum = %v, want %v", s.Sum, wantSum)
	}
}

func bound(i int) any {
	if i < len(metrics.DurationBounds) {
		return metrics.DurationBounds[i]
	}
	return "+Inf"
}

func BenchmarkHistogramObserve(b *testing.B) {
	var h metrics.Histogram
	for i := 0; b.Loop(); i++ {
		h.Observe(time.Duration(i%20) * time.Millisecond)
	}
}

// BenchmarkCommitTiming is what an engine adds to each committed
// transaction: a clock read before COMMIT, one after, and an Observe.
func BenchmarkCommitTiming(b *testing.B) {
	var h metrics.Histogram
	for b.Loop() {
		start := time.Now()
		h.Observe(time.Since(start))
	}
}
