package db

// Search benchmarks over a store of realistic, varied conversations.
// Run: go test -run '^$' -bench BenchmarkSearch100k ./db/
// The 1M variant is too slow for CI: SESSIONDB_BENCH_1M=1 and no -short.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/internal/benchcorpus"
)

func BenchmarkSearch100k(b *testing.B) { benchmarkSearch(b, 100_000, 0) }

// BenchmarkSearch100k_WhileAppending searches while 16 appenders append
// (each search also covers the rows they queued), and checks that a
// message is found by the Search right after its append returned.
func BenchmarkSearch100k_WhileAppending(b *testing.B) { benchmarkSearch(b, benchSearchSize(), 16) }

// benchSearchSize is 100,000, or SESSIONDB_BENCH_N when set (a quick look).
func benchSearchSize() int {
	if n, err := strconv.Atoi(os.Getenv("SESSIONDB_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

func BenchmarkSearch1M(b *testing.B) {
	if testing.Short() || os.Getenv("SESSIONDB_BENCH_1M") != "1" {
		b.Skip("set SESSIONDB_BENCH_1M=1 (and no -short) to fill and search a million messages")
	}
	benchmarkSearch(b, 1_000_000, 0)
}

// benchmarkSearch fills a store once (b.Loop runs the function body once),
// then runs the query mix round-robin for each sort, reporting latency
// percentiles.
func benchmarkSearch(b *testing.B, n, appenders int) {
	path := filepath.Join(b.TempDir(), "state.db")
	start := time.Now()
	fillSearchStore(b, path, n)
	b.Logf("filled %d messages in %v", n, time.Since(start).Round(time.Millisecond))
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// The fill leaves most of its rows queued (Close and Open index for
	// two seconds each); without this the searches would be timed while
	// the indexer catches up on them — far behind, scanning windows —
	// instead of in the steady state the benchmark is about.
	if err := s.IndexNow(context.Background()); err != nil {
		b.Fatal(err)
	}
	if appenders > 0 {
		defer appendInBackground(b, s, appenders)()
	}
	freshWords := 0
	for _, sort := range []SearchSort{SortRelevance, SortNewest} {
		b.Run(sort.String(), func(b *testing.B) {
			ctx := context.Background()
			var lat []time.Duration
			var queued []int64
			i, fresh := 0, 0
			for b.Loop() {
				q := benchcorpus.Queries[i%len(benchcorpus.Queries)]
				i++
				if appenders > 0 && i%5 == 0 { // a just-acknowledged message
					freshWords++
					q = fmt.Sprintf("fresh%dword", freshWords)
					id, err := s.AppendMessage(ctx, "live", NewMessage{Role: RoleUser, Content: "just said " + q})
					if err != nil {
						b.Fatal(err)
					}
					queued = append(queued, s.Stats().IndexQueued)
					t := time.Now()
					hits, err := s.Search(ctx, q, SearchOptions{Sort: sort})
					lat = append(lat, time.Since(t))
					if err != nil {
						b.Fatal(err)
					}
					if len(hits) != 1 || hits[0].MessageID != id {
						b.Fatalf("Search(%q) right after its append: %d hits, want message %d", q, len(hits), id)
					}
					fresh++
					continue
				}
				t := time.Now()
				if _, err := s.Search(ctx, q, SearchOptions{Sort: sort}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			if len(queued) > 0 {
				slices.Sort(queued)
				b.ReportMetric(float64(fresh), "fresh-found")
				b.ReportMetric(float64(queued[len(queued)/2]), "queued-p50")
			}
			slices.Sort(lat)
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
		})
	}
}

// appendInBackground runs n appenders on session "live" until the
// returned function is called.
func appendInBackground(b *testing.B, s *Store, n int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := s.CreateSession(ctx, NewSession{ID: "live", Source: "bench"}); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	for a := range n {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(a), 9))
			words := benchcorpus.NewWords(rng)
			for j := 0; ctx.Err() == nil; j++ {
				if _, err := s.AppendMessage(ctx, "live", words.Message(rng, j)); err != nil && ctx.Err() == nil {
					b.Error(err)
					return
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// fillSearchStore writes benchcorpus's n messages into a store at path.
func fillSearchStore(b *testing.B, path string, n int) {
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := benchcorpus.Fill(ctx, s.Store, n); err != nil {
		b.Fatal(err)
	}
}
