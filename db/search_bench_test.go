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
	"strings"
	"sync"
	"testing"
	"time"
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

// benchQueries is the fixed query mix: frequent, middling and rare words,
// several words, a phrase, dotted and hyphenated terms, CJK (trigram and
// short-term scan), a word-index miss that falls back to the trigram
// index, and a miss everywhere.
var benchQueries = []string{
	"error", "timeout", "kubernetes", "goroutine", "database migration", `"connection refused"`,
	"os.ReadFile", "gpt-4o", "deploy failed", "vorakitu", "検索", "設定ファイル", "ubernete", "zzqxjv",
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
				q := benchQueries[i%len(benchQueries)]
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
			words := newBenchWords(rng)
			for j := 0; ctx.Err() == nil; j++ {
				if _, err := s.AppendMessage(ctx, "live", words.message(rng, j)); err != nil && ctx.Err() == nil {
					b.Error(err)
					return
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// fillSearchStore writes n messages over sessions of 40 to 160 messages
// (about n/100 sessions), each session one AppendMessages batch (at most
// 500 messages).
func fillSearchStore(b *testing.B, path string, n int) {
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	words := newBenchWords(rng)
	sources := []string{"cli", "gateway", "cron", "telegram"}
	for sess, written := 0, 0; written < n; sess++ {
		id := fmt.Sprintf("bench-%05d", sess)
		if _, err := s.CreateSession(ctx, NewSession{ID: id, Source: sources[sess%len(sources)], Model: "gpt-4o"}); err != nil {
			b.Fatal(err)
		}
		size := min(n-written, 40+rng.IntN(121))
		batch := make([]NewMessage, 0, 500)
		for j := range size {
			batch = append(batch, words.message(rng, j))
			if len(batch) == cap(batch) || j == size-1 {
				if _, err := s.AppendMessages(ctx, id, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		written += size
	}
}

// benchWords draws realistic text: a Zipf-distributed vocabulary of real
// words and technical tokens, then a long tail of invented words.
type benchWords struct {
	vocab []string
	zipf  *rand.Zipf
}

var benchHead = strings.Fields(`the to a of and is in it that for you this with on be not
are can if as have we will error file function test build run code use at from
but your should it's value return type check by or need see what so all one new
config data server request response time call update change add fix issue
log output input path user make set get list start stop open close read write
timeout retry connection refused failed deploy database migration kubernetes
docker container pod service cluster node goroutine channel mutex deadlock
panic stack trace memory leak cache index query schema table column row
os.ReadFile http.Client json.Unmarshal context.Context gpt-4o claude-3.5 v1.2.3
api key token auth login session message model prompt tool result agent`)

var benchCJK = []string{
	"設定ファイルを検索する", "データベースの移行に失敗しました", "接続がタイムアウトしました",
	"日本語の文章を検索する", "搜索配置文件", "서버 연결이 거부되었습니다",
}

func newBenchWords(rng *rand.Rand) *benchWords {
	vocab := slices.Clone(benchHead)
	syl := strings.Fields("ka ri to mo na su ve lo pi ra de xu ti zen bor qua ul im es or")
	for len(vocab) < 20000 {
		k := 2 + rng.IntN(3)
		var w strings.Builder
		for range k {
			w.WriteString(syl[rng.IntN(len(syl))])
		}
		vocab = append(vocab, w.String())
	}
	vocab = append(vocab, "vorakitu") // a rare word the queries look for
	return &benchWords{vocab: vocab, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))}
}

func (w *benchWords) text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			if i%12 == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(w.vocab[w.zipf.Uint64()])
	}
	return b.String()
}

func (w *benchWords) message(rng *rand.Rand, j int) NewMessage {
	switch {
	case rng.IntN(40) == 0:
		return NewMessage{Role: RoleUser, Content: benchCJK[rng.IntN(len(benchCJK))] + " " + w.text(rng, 3)}
	case j%3 == 0:
		return NewMessage{Role: RoleUser, Content: w.text(rng, 5+rng.IntN(30))}
	case j%3 == 1:
		return NewMessage{Role: RoleAssistant, Content: w.text(rng, 10+rng.IntN(90))}
	}
	tools := []string{"shell", "read_file", "grep", "web_search"}
	lines := make([]string, 1+rng.IntN(6))
	for i := range lines {
		lines[i] = fmt.Sprintf("/srv/app/%s.go:%d: %s", w.vocab[10+rng.IntN(200)], rng.IntN(900), w.text(rng, 4+rng.IntN(10)))
	}
	return NewMessage{Role: RoleTool, ToolName: tools[rng.IntN(len(tools))], Content: strings.Join(lines, "\n")}
}
