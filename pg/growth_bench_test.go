package pg

// The growth benchmark (issue 37) on this engine: db's
// BenchmarkSearchGrowth, the same corpus and classes
// (benchcorpus.Classes), each size filled once into a schema of its own
// (bench_growth_<n>) that later runs on the same server reuse.
//
//	SESSIONDB_BENCH_1M=1 go -C pg test -run '^$' -bench BenchmarkSearchGrowth \
//	    -benchtime 30x -timeout 90m .

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/internal/benchcorpus"
)

// growthSizes: SESSIONDB_GROWTH_SIZES (comma-separated) when set, else
// 10k and 100k, and 1M with SESSIONDB_BENCH_1M=1.
func growthSizes() []int {
	if env := os.Getenv("SESSIONDB_GROWTH_SIZES"); env != "" {
		var sizes []int
		for _, f := range strings.Split(env, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				sizes = append(sizes, n)
			}
		}
		return sizes
	}
	sizes := []int{10_000, 100_000}
	if os.Getenv("SESSIONDB_BENCH_1M") == "1" && !testing.Short() {
		sizes = append(sizes, 1_000_000)
	}
	return sizes
}

func BenchmarkSearchGrowth(b *testing.B) {
	dsn := benchDSN(b)
	for _, n := range growthSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ctx := context.Background()
			schema := fmt.Sprintf("bench_growth_%d", n)
			pool := benchPoolIn(b, dsn, schema, 0, nil)
			// A corpus left by an older build is migrated here: a migration
			// that rewrites every message takes minutes at a million, past
			// Open's default patience.
			opts := Options{OpenPatience: time.Hour}
			start := time.Now()
			s, err := OpenPool(ctx, pool, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.Logf("opened (and migrated) in %v", time.Since(start).Round(time.Millisecond))
			var have int
			if err := pool.QueryRow(ctx, "SELECT count(*) FROM messages").Scan(&have); err != nil {
				b.Fatal(err)
			}
			if have != n {
				s.Close()
				if _, err := pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
					b.Fatal(err)
				}
				pool.Reset() // the connections' prepared statements name the dropped tables
				if s, err = OpenPool(ctx, pool, opts); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := benchcorpus.Fill(ctx, s.Store, n); err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
					b.Fatal(err)
				}
				b.Logf("filled %d messages in %v (%.0f msgs/s)", n, took.Round(time.Millisecond), float64(n)/took.Seconds())
			}
			lat := benchcorpus.Latencies{}
			if err := lat.Round(ctx, s.Store); err != nil { // warm the caches, unmeasured
				b.Fatal(err)
			}
			lat = benchcorpus.Latencies{}
			for b.Loop() {
				if err := lat.Round(ctx, s.Store); err != nil {
					b.Fatal(err)
				}
			}
			for _, c := range benchcorpus.Classes {
				b.ReportMetric(benchcorpus.Ms(lat.Percentile(c.Name, 50)), c.Name+"-p50-ms")
				b.ReportMetric(benchcorpus.Ms(lat.Percentile(c.Name, 90)), c.Name+"-p90-ms")
			}
			var total, heap, words, trigrams int64
			if err := pool.QueryRow(ctx, `SELECT pg_total_relation_size('messages'), pg_table_size('messages'),
				COALESCE((SELECT sum(pg_relation_size(indexrelid)) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
				          WHERE i.indrelid = 'messages'::regclass AND c.relname IN ('messages_words')), 0),
				COALESCE((SELECT sum(pg_relation_size(indexrelid)) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
				          WHERE i.indrelid = 'messages'::regclass AND c.relname LIKE 'messages%trigram'), 0)`).Scan(&total, &heap, &words, &trigrams); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(total)/float64(n), "table-B/msg")
			b.ReportMetric(float64(words+trigrams)/float64(n), "index-B/msg")
			b.Logf("n=%d: messages %d MB (heap and toast %d MB), word index %d MB, trigram indexes %d MB\n%s",
				n, total>>20, heap>>20, words>>20, trigrams>>20, lat.Table())
		})
	}
}
