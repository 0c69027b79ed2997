package pg

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/internal/benchcorpus"
)

var (
	bulkBenchN       = flag.Int("bulk.n", 20000, "messages a fill of BenchmarkBulkLoad_Paired writes")
	bulkBenchLoaders = flag.Int("bulk.loaders", 1, "goroutines sharing a fill's sessions (benchcorpus.FillParallel)")
)

// BenchmarkBulkLoad_Paired measures what a bulk load's cleaner (bulk.go)
// does for AppendMessages: each iteration fills two fresh schemas with
// benchcorpus.Fill's -bulk.n messages (sessions of 40-160, one
// AppendMessages each), one inside Store.BulkLoad and one outside, in
// alternating order, so both figures come from the same minutes of a
// noisy machine. Reported: each fill's msgs/s to the indexes caught up
// (BulkLoad's return; the plain fill's pending lists merged after it)
// and the server's CPU a message, and bulk/plain.
//
//	go -C pg test -run '^$' -bench BulkLoad_Paired -benchtime 3x .
func BenchmarkBulkLoad_Paired(b *testing.B) {
	ctx := context.Background()
	var took [2]time.Duration // plain, bulk
	var cpu [2]float64
	fill := func(bulk bool) {
		pool := benchPool(b, 0, nil)
		s, err := OpenPool(ctx, pool, Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		server := serverCPU(b, pool)
		i := 0
		if bulk {
			i = 1
		}
		before, start := server(), time.Now()
		if bulk {
			err = s.BulkLoad(ctx, func(ctx context.Context) error {
				return benchcorpus.FillParallel(ctx, s.Store, *bulkBenchN, benchcorpus.FillBatch, *bulkBenchLoaders)
			})
		} else if err = benchcorpus.FillParallel(ctx, s.Store, *bulkBenchN, benchcorpus.FillBatch, *bulkBenchLoaders); err == nil {
			// Caught up as a load leaves them: the pending lists merged
			// (up to 4 MB each would be left, whose merge every later
			// search and insert pays for).
			_, err = pgDriver{s.eng}.cleanPending(ctx)
		}
		if err != nil {
			b.Fatal(err)
		}
		took[i] += time.Since(start)
		cpu[i] += server() - before
	}
	n := 0
	for b.Loop() {
		first := n%2 == 1 // plain first, then bulk first, ...
		fill(first)
		fill(!first)
		n++
	}
	msgs := float64(n * *bulkBenchN)
	plain, bulk := msgs/took[0].Seconds(), msgs/took[1].Seconds()
	b.ReportMetric(plain, "plain-msgs/s")
	b.ReportMetric(bulk, "bulk-msgs/s")
	b.ReportMetric(bulk/plain, "bulk/plain")
	if cpu[0] >= 0 && cpu[1] >= 0 {
		b.ReportMetric(cpu[0]*1e6/msgs, "plain-server-µs/msg")
		b.ReportMetric(cpu[1]*1e6/msgs, "bulk-server-µs/msg")
	}
}
