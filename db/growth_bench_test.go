package db

// The growth benchmark (issue 37): the search classes of
// benchcorpus.Classes at 10k, 100k and (SESSIONDB_BENCH_1M=1) 1M
// messages, with the index's size and the file's bytes per message. Its
// PostgreSQL twin is pg's BenchmarkSearchGrowth.
//
//	SESSIONDB_BENCH_DIR=/some/dir SESSIONDB_BENCH_1M=1 go test -run '^$' \
//	    -bench BenchmarkSearchGrowth -benchtime 30x -timeout 60m ./db/
//
// SESSIONDB_BENCH_DIR keeps each size's filled store (growth-<n>.db) for
// the next run: filling a million messages takes minutes. Without it the
// stores are filled in a temporary directory every run.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/internal/benchcorpus"
)

// growthSizes are the sizes the growth benchmark fills and searches:
// SESSIONDB_GROWTH_SIZES (comma-separated) when set, else 10k and 100k,
// and 1M with SESSIONDB_BENCH_1M=1.
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
	dir := os.Getenv("SESSIONDB_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	for _, n := range growthSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ctx := context.Background()
			path := growthStore(b, dir, n)
			s, err := Open(ctx, path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			// A store filled (or cut short) by an earlier run may hold rows
			// the indexer has not reached: index them before timing.
			if err := s.IndexNow(ctx); err != nil {
				b.Fatal(err)
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
				b.ReportMetric(benchcorpus.Ms(lat.Percentile(c.Name+benchcorpus.CPU, 50)), c.Name+"-cpu-p50-ms")
			}
			words, trigrams := growthIndexBytes(b, s)
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Size())/float64(n), "file-B/msg")
			b.ReportMetric(float64(words+trigrams)/float64(n), "index-B/msg")
			b.Logf("n=%d: file %d MB, word index %d MB, trigram index %d MB\n%s", n, st.Size()>>20, words>>20, trigrams>>20, lat.Table())
		})
	}
}

// growthStore returns the path of a store of benchcorpus's n messages in
// dir, filled (and indexed) unless a previous run left it complete there
// (growth-<n>.db.done, written after the fill).
func growthStore(b *testing.B, dir string, n int) string {
	path := filepath.Join(dir, fmt.Sprintf("growth-%d.db", n))
	done := path + ".done"
	if _, err := os.Stat(done); err == nil {
		return path
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := benchcorpus.Fill(ctx, s.Store, n); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	if err := s.IndexNow(ctx); err != nil {
		b.Fatal(err)
	}
	indexed := time.Since(start)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	rate := float64(n) / took.Seconds()
	b.Logf("filled %d messages in %v (%.0f msgs/s), indexed by %v", n, took.Round(time.Millisecond), rate, indexed.Round(time.Millisecond))
	if err := os.WriteFile(done, fmt.Appendf(nil, "filled in %v (%.0f msgs/s), indexed by %v\n", took, rate, indexed), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// growthIndexBytes is the size of the word and the trigram index: the
// bytes of their shadow tables' blocks, terms and document sizes (this
// build of SQLite has no dbstat to count pages).
func growthIndexBytes(b *testing.B, s *Store) (words, trigrams int64) {
	ctx := context.Background()
	for _, ix := range []struct {
		table string
		size  *int64
	}{{"messages_fts", &words}, {"messages_fts_trigram", &trigrams}} {
		q := fmt.Sprintf(`SELECT (SELECT COALESCE(SUM(length(block)), 0) FROM %[1]s_data)
			+ (SELECT COALESCE(SUM(length(term)) + 16 * COUNT(*), 0) FROM %[1]s_idx)
			+ (SELECT COALESCE(SUM(length(sz)) + 8 * COUNT(*), 0) FROM %[1]s_docsize)`, ix.table)
		if err := s.readers.QueryRowContext(ctx, q).Scan(ix.size); err != nil {
			b.Fatalf("index size: %v", err)
		}
	}
	return words, trigrams
}
