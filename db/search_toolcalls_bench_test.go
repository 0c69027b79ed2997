package db

// Whether the trigram index takes the tool text (migration 10): what
// indexing it costs the background indexer, measured against a trigram
// index that leaves the column unindexed, alternating in one run.
// Run: go test -run '^$' -bench BenchmarkIndexToolText -benchtime 1x ./db/

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/internal/benchcorpus"
)

// toolTurn is an agent's turn of the benchmark: an assistant message
// calling a tool, and the tool's result. The calls are drawn from what
// coding agents send: mostly short (a shell command, a path to read), one
// in four an edit (old and new text, about a kilobyte), one in ten a whole
// file written (2 to 12 KB).
func toolTurn(rng *rand.Rand, w *benchcorpus.Words) []NewMessage {
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(w.Message(rng, 1).Content)
			b.WriteByte('\n')
		}
		return strings.ToValidUTF8(b.String()[:n], "")
	}
	var call ToolCall
	switch r := rng.IntN(20); {
	case r < 2:
		call = ToolCall{Name: "write_file", Arguments: fmt.Sprintf(`{"path":"/srv/app/f%d.go","content":%q}`, rng.IntN(1000), text(2000+rng.IntN(10000)))}
	case r < 7:
		call = ToolCall{Name: "edit_file", Arguments: fmt.Sprintf(`{"path":"/srv/app/f%d.go","old":%q,"new":%q}`, rng.IntN(1000), text(300+rng.IntN(400)), text(300+rng.IntN(400)))}
	default:
		call = ToolCall{Name: "shell", Arguments: fmt.Sprintf(`{"cmd":%q}`, text(30+rng.IntN(120)))}
	}
	call.ID = fmt.Sprint("call-", rng.Int64())
	return []NewMessage{
		{Role: RoleAssistant, Content: text(40 + rng.IntN(200)), ToolCalls: []ToolCall{call}},
		{Role: RoleTool, ToolName: call.Name, ToolCallID: call.ID, Content: text(100 + rng.IntN(1500))},
	}
}

func BenchmarkIndexToolText(b *testing.B) {
	const base, rounds, batch = 4000, 16, 500 // rows before, rounds per variant, rows a round (the indexer's slice cap)
	type variant struct {
		name string
		s    *Store
		per  []time.Duration // indexing time per row, each round
		grow []int64         // trigram index bytes per row, each round
	}
	open := func(name string, withToolText bool) *variant {
		path := filepath.Join(b.TempDir(), "state.db")
		s, err := Open(context.Background(), path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		if !withToolText {
			// The same statements, the column kept but not indexed.
			err := s.w.write(context.Background(), time.Minute, func(ctx context.Context, tx genDBTX) error {
				for _, stmt := range []string{
					"DROP TABLE messages_fts_trigram",
					"CREATE VIRTUAL TABLE messages_fts_trigram USING fts5 (content, tool_text UNINDEXED, content = 'messages', content_rowid = 'id', tokenize = 'trigram')",
				} {
					if _, err := tx.ExecContext(ctx, stmt); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		return &variant{name: name, s: s}
	}
	variants := []*variant{open("trigram over content and tool text", true), open("trigram over content only", false)}
	fill := func(v *variant, rng *rand.Rand, n int) {
		w := benchcorpus.NewWords(rng)
		sid := fmt.Sprint("bench-", rng.Int64())
		if _, err := v.s.CreateSession(context.Background(), NewSession{ID: sid}); err != nil {
			b.Fatal(err)
		}
		var ms []NewMessage
		for len(ms) < n {
			ms = append(ms, toolTurn(rng, w)...)
		}
		if _, err := v.s.AppendMessages(context.Background(), sid, ms[:n]); err != nil {
			b.Fatal(err)
		}
	}
	// The trigram index's size: its segments' bytes.
	size := func(v *variant) int64 {
		var n int64
		if err := v.s.readers.QueryRowContext(context.Background(), "SELECT SUM(length(block)) FROM messages_fts_trigram_data").Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	for i, v := range variants {
		v.s.w.ix.paused.Store(true)
		fill(v, rand.New(rand.NewPCG(7, uint64(i))), base)
		if err := v.s.IndexNow(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		for r := range rounds {
			for k := range variants {
				v := variants[(r+k)%len(variants)] // alternate which goes first
				// The same rows for both variants in each round.
				fill(v, rand.New(rand.NewPCG(uint64(r), 99)), batch)
				before := size(v)
				start := time.Now()
				if err := v.s.IndexNow(context.Background()); err != nil {
					b.Fatal(err)
				}
				v.per = append(v.per, time.Since(start)/batch)
				v.grow = append(v.grow, (size(v)-before)/batch)
			}
		}
	}
	median := func(d []time.Duration) time.Duration { d = slices.Clone(d); slices.Sort(d); return d[len(d)/2] }
	medianInt := func(d []int64) int64 { d = slices.Clone(d); slices.Sort(d); return d[len(d)/2] }
	a, c := variants[0], variants[1]
	for _, v := range variants {
		b.Logf("%-36s indexing %v a row (median of %d rounds), trigram index +%d bytes a row", v.name, median(v.per), len(v.per), medianInt(v.grow))
	}
	var ratios []float64
	for r := range a.per {
		ratios = append(ratios, float64(a.per[r])/float64(c.per[r]))
	}
	slices.Sort(ratios)
	b.Logf("tool text in the trigram index: indexing %.2f× (rounds %.2f–%.2f), trigram index growth %.2f×",
		ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1], float64(medianInt(a.grow))/float64(medianInt(c.grow)))
	b.ReportMetric(ratios[len(ratios)/2], "index-cost-ratio")
}

// BenchmarkMigrateToolText100k times migration 10 on a file of 100,000
// messages from before it (version 8) — the search benchmarks' corpus
// (no tool calls), and a tool-heavy one (half of it the corpus, half
// toolTurn's turns: a quarter of all messages a call) — the tool text
// computed for every row and both indexes rebuilt, in the Open that
// migrates.
// Run: go test -run '^$' -bench BenchmarkMigrateToolText100k -benchtime 1x -timeout 30m ./db/
func BenchmarkMigrateToolText100k(b *testing.B) {
	b.Run("corpus", func(b *testing.B) { benchmarkMigrateToolText(b, 100_000, 0) })
	b.Run("tool-heavy", func(b *testing.B) { benchmarkMigrateToolText(b, 50_000, 50_000) })
}

func benchmarkMigrateToolText(b *testing.B, corpus, tools int) {
	n := corpus + tools
	path := filepath.Join(b.TempDir(), "state.db")
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := benchcorpus.Fill(ctx, s.Store, corpus); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	w := benchcorpus.NewWords(rng)
	for sess := 0; sess*500 < tools; sess++ {
		id := fmt.Sprint("tools-", sess)
		if _, err := s.CreateSession(ctx, NewSession{ID: id}); err != nil {
			b.Fatal(err)
		}
		var ms []NewMessage
		for len(ms) < 500 {
			ms = append(ms, toolTurn(rng, w)...)
		}
		if _, err := s.AppendMessages(ctx, id, ms); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	if fi, err := os.Stat(path); err == nil {
		b.Logf("file of %d messages: %d MB", n, fi.Size()>>20)
	}
	for b.Loop() {
		b.StopTimer()
		migrateDownTo(b, path, 8)
		b.StartTimer()
		start := time.Now()
		s, err := Open(ctx, path, Options{OpenPatience: 30 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("Open migrating %d messages to version %d: %v", n, latestMigration(), time.Since(start).Round(time.Millisecond))
		s.Close()
	}
}
