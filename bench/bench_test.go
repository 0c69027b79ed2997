package bench

// Benchmarks: sessiondb against the raw driver (the limit for this driver,
// same pragmas, same schema, same statements) and against a Python peer
// (peer_test.go). Run: go test -run '^$' -bench . -benchtime 2000x ./bench/
// Figures and ratios: docs/PERFORMANCE.md.

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/internal/benchcorpus"
)

// contentBytes lengthens the messages of the AppendMessage benchmarks and
// the Python peer (not the raw driver's or the batches'): the default
// benchmark message is 55 bytes, a real agent turn hundreds to thousands,
// and the full-text indexes' cost grows with the text (the trigram
// index's with every character).
var contentBytes = flag.Int("bench.content", 0, "pad the content of the messages BenchmarkAppendMessage_Serial, BenchmarkAppendMessage_Concurrent and the Python peer append to this many bytes (0: the 55-byte default)")

// appendedMessage is the i-th message the append benchmarks write:
// benchMessage, padded to -bench.content bytes.
func appendedMessage(i int) db.NewMessage { return paddedMessage(i, *contentBytes) }

// paddedMessage is benchMessage(i) padded to size bytes with text that
// varies with i, so that the indexes see new terms as real turns bring
// them.
func paddedMessage(i, size int) db.NewMessage {
	m := benchMessage(i)
	if size <= len(m.Content) {
		return m
	}
	var b strings.Builder
	b.WriteString(m.Content)
	for k := 0; b.Len() < size; k++ {
		fmt.Fprintf(&b, " %s call%d returned %d rows from table_%d;", padWords[(i+k)%len(padWords)], (i*7+k)%997, (i+k*13)%10007, k%41)
	}
	m.Content = b.String()[:size]
	return m
}

var padWords = strings.Fields("the agent ran the tool search index message session lineage lease handoff compression title gateway postgres sqlite commit durable fsync writer reader cluster network request response error retry timeout function argument result file path directory build test deploy config")

func benchStore(b testing.TB) *db.Store {
	b.Helper()
	s, err := db.Open(context.Background(), filepath.Join(b.TempDir(), "state.db"), db.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.CreateSession(context.Background(), db.NewSession{ID: "bench", Source: "bench"}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkAppendMessage_Serial is one appender, one durable commit per
// message.
func BenchmarkAppendMessage_Serial(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.AppendMessage(ctx, "bench", appendedMessage(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkRawDriver_Serial does what AppendMessage does (see
// rawAppender) with the bare driver on a connection configured as the
// writer's, every statement prepared once: the ceiling for this driver
// and these pragmas.
func BenchmarkRawDriver_Serial(b *testing.B) {
	s := benchStore(b)
	path := s.Path()
	s.Close()
	ctx := context.Background()
	ra, err := newRawAppender(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer ra.close()
	b.ResetTimer()
	for i := range b.N {
		if err := ra.append(ctx, i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkAppendMessage_Concurrent runs N appenders sharing b.N appends
// (the same workload as `sessiondb bench`) and reports messages per second
// and latency percentiles.
func BenchmarkAppendMessage_Concurrent(b *testing.B) {
	for _, n := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) {
			s := benchStore(b)
			ctx := context.Background()
			lag := sampleIndexLag(s)
			b.ResetTimer()
			r, err := timeOps(b.Name(), b.N, n, func(i int) error {
				_, err := s.AppendMessage(ctx, "bench", appendedMessage(i))
				return err
			})
			b.StopTimer()
			lagP50, lagP99, lagMax := lag()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(ms(lagP50), "lag-p50-ms")
			b.ReportMetric(ms(lagP99), "lag-p99-ms")
			b.ReportMetric(ms(lagMax), "lag-max-ms")
			b.ReportMetric(float64(r.P50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99-ms")
			b.ReportMetric(r.PerSecond, "msgs/s")
			if st := s.Stats(); st.Transactions > 0 {
				b.ReportMetric(float64(st.WritesCommitted)/float64(st.Transactions), "msgs/txn")
				b.ReportMetric(float64(st.WALRestarts), "wal-restarts")
			}
		})
	}
}

// BenchmarkAppendMessage_OwnSessions runs N appenders sharing b.N appends,
// the i-th append going to session i mod N: the workload of a gateway
// serving many conversations, measured beside the PostgreSQL engine's
// benchmark of the same name (pg/bench_test.go, docs/PERFORMANCE.md).
func BenchmarkAppendMessage_OwnSessions(b *testing.B) {
	for _, n := range []int{8, 16, 64} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) {
			s := benchStore(b)
			ctx := context.Background()
			for w := range n {
				if _, err := s.CreateSession(ctx, db.NewSession{ID: fmt.Sprint("bench-", w), Source: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			r, err := timeOps(b.Name(), b.N, n, func(i int) error {
				_, err := s.AppendMessage(ctx, fmt.Sprint("bench-", i%n), appendedMessage(i))
				return err
			})
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(r.P50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99-ms")
			b.ReportMetric(r.PerSecond, "msgs/s")
		})
	}
}

// sampleIndexLag samples the indexer's lag (Stats.IndexLag: how long the
// longest-waiting queued row has waited) every 5 ms until the returned
// function is called, which gives its percentiles over the samples.
func sampleIndexLag(s *db.Store) (stop func() (p50, p99, largest time.Duration)) {
	done := make(chan struct{})
	var samples []time.Duration
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				samples = append(samples, s.Stats().IndexLag)
			}
		}
	})
	return func() (p50, p99, largest time.Duration) {
		close(done)
		wg.Wait()
		if len(samples) == 0 {
			return 0, 0, 0
		}
		slices.Sort(samples)
		return samples[len(samples)/2], samples[len(samples)*99/100], samples[len(samples)-1]
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkAppendMessages_Batch10 appends ten messages per transaction.
func BenchmarkAppendMessages_Batch10(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	batch := make([]db.NewMessage, 10)
	for i := range batch {
		batch[i] = benchMessage(i)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := s.AppendMessages(ctx, "bench", batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(10*b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// fill20k makes a store holding one 20,000-message session.
func fill20k(b *testing.B) *db.Store {
	s := benchStore(b)
	batch := make([]db.NewMessage, 1000)
	for k := range 20 {
		for i := range batch {
			batch[i] = benchMessage(k*1000 + i)
		}
		if _, err := s.AppendMessages(context.Background(), "bench", batch); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkMessages_20k reads a 20,000-message session through the API.
func BenchmarkMessages_20k(b *testing.B) {
	s := fill20k(b)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		ms, err := s.Messages(ctx, "bench", db.MessageQuery{Limit: 20000})
		if err != nil || len(ms) != 20000 {
			b.Fatal(len(ms), err)
		}
	}
}

// BenchmarkOpenConversation is what a session picker does when one is
// picked: the session and its first page of 20 messages, two short reads
// whose cost is mostly per statement, not per row.
func BenchmarkOpenConversation(b *testing.B) {
	s := fill20k(b)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Session(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
		ms, err := s.Messages(ctx, "bench", db.MessageQuery{Limit: 20})
		if err != nil || len(ms) != 20 {
			b.Fatal(len(ms), err)
		}
	}
}

// BenchmarkRawSelect_20k loads the same rows with a bare SELECT on a
// connection configured as the read pool's into a slice, as a
// hand-written loader would: the baseline for Messages.
func BenchmarkRawSelect_20k(b *testing.B) {
	s := fill20k(b)
	ctx := context.Background()
	loader, err := openRawLoader(s.Path())
	if err != nil {
		b.Fatal(err)
	}
	defer loader.Close()
	b.ResetTimer()
	for range b.N {
		if err := rawLoad(ctx, loader, 20000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen_Existing opens (and closes) an existing store.
func BenchmarkOpen_Existing(b *testing.B) {
	s := benchStore(b)
	path := s.Path()
	s.Close()
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		s, err := db.Open(ctx, path, db.Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkAppendMessages_ToolExchange appends a tool exchange per
// transaction (a user turn, an assistant calling two tools, both results,
// the answer): the rows whose calls get a UID at insert (issue 35).
func BenchmarkAppendMessages_ToolExchange(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		batch := benchcorpus.ToolExchange(i)
		if _, err := s.AppendMessages(ctx, "bench", batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(5*b.N)/b.Elapsed().Seconds(), "msgs/s")
}
