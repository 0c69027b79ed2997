package hermes_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/hermes"
)

// writeHermesFile writes a Hermes-shaped state.db at path — the fixture's
// own schema (Hermes's DDL, its FTS triggers included) — holding sessions ×
// perSession messages: user turns, assistant turns with reasoning and
// every fifth with a tool call in OpenAI's format, tool results, usage.
func writeHermesFile(tb testing.TB, schemaPath, path string, sessions, perSession int) {
	tb.Helper()
	ctx := context.Background()
	ddl, err := os.ReadFile(schemaPath)
	if err != nil {
		tb.Skipf("Hermes schema not found (%v): the generated file uses the fixture's schema.sql", err)
	}
	registerSQLite(tb)
	//sessiondb:allow rawopen -- writes a foreign (Hermes-schema) file for the import benchmark
	d, err := sql.Open("sqlite3", "file:"+path+"?_pragma=journal_mode(wal)&_pragma=synchronous(off)")
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	// The DDL lists indexes before their tables and names the FTS shadow
	// tables (SQLite makes those with the virtual tables): tables first,
	// then indexes and triggers; shadow tables left out.
	var tables, rest []string
	for _, stmt := range strings.Split(string(ddl), ";\n\n") {
		stmt = strings.TrimSuffix(strings.TrimSpace(stmt), ";")
		switch {
		case stmt == "", strings.Contains(stmt, "CREATE TABLE 'messages_fts"), strings.Contains(stmt, "sqlite_sequence"):
		case strings.HasPrefix(stmt, "CREATE TABLE"), strings.HasPrefix(stmt, "CREATE VIRTUAL TABLE"):
			tables = append(tables, stmt)
		default:
			rest = append(rest, stmt)
		}
	}
	for _, stmt := range append(tables, rest...) {
		if _, err := d.ExecContext(ctx, stmt); err != nil {
			tb.Fatalf("%s: %v", stmt, err)
		}
	}
	//sessiondb:allow txonly -- fills the foreign benchmark file in one transaction
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	t0 := 1796000000.0
	words := strings.Repeat("the deploy pipeline retries each stage with backoff; ", 6)
	for k := range sessions {
		id := fmt.Sprintf("gen-%05d", k)
		start := t0 + float64(k)*60
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, source, user_id, model, started_at, ended_at,
			end_reason, message_count, input_tokens, output_tokens, cwd, billing_provider, estimated_cost_usd, title)
			VALUES (?, 'cli', 'ana', 'anthropic/claude-sonnet-4.5', ?, ?, 'user_exit', ?, 1000, 200, '/src/app',
			'openrouter', 0.01, ?)`, id, start, start+50, perSession, "Generated session "+id); err != nil {
			tb.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_model_usage (session_id, model, billing_provider,
			api_call_count, input_tokens, output_tokens, estimated_cost_usd, first_seen, last_seen)
			VALUES (?, 'anthropic/claude-sonnet-4.5', 'openrouter', 3, 1000, 200, 0.01, ?, ?)`, id, start, start+50); err != nil {
			tb.Fatal(err)
		}
		for i := range perSession {
			ts := start + float64(i)*0.25
			var err error
			switch {
			case i%4 == 0:
				_, err = tx.ExecContext(ctx, `INSERT INTO messages (session_id, role, content, timestamp, token_count)
					VALUES (?, 'user', ?, ?, 40)`, id, fmt.Sprintf("Turn %d: why does stage %d fail? %s", i, i%7, words[:120]), ts)
			case i%20 == 1:
				_, err = tx.ExecContext(ctx, `INSERT INTO messages (session_id, role, tool_calls, timestamp,
					finish_reason, reasoning, reasoning_details) VALUES (?, 'assistant', ?, ?, 'tool_calls', ?, ?)`,
					id, fmt.Sprintf(`[{"id": "call_%d", "type": "function", "function": {"name": "terminal", "arguments": "{\"cmd\": \"go test ./stage%d\"}"}}]`, i, i%7),
					ts, "Run the stage's tests first.", `[{"type": "thinking", "thinking": "Run the tests.", "signature": "sig"}]`)
			case i%20 == 2:
				_, err = tx.ExecContext(ctx, `INSERT INTO messages (session_id, role, content, tool_call_id, tool_name, timestamp)
					VALUES (?, 'tool', ?, ?, 'terminal', ?)`, id, "--- FAIL: TestStage (0.01s)\n"+words, fmt.Sprintf("call_%d", i-1), ts)
			default:
				_, err = tx.ExecContext(ctx, `INSERT INTO messages (session_id, role, content, timestamp, finish_reason, reasoning)
					VALUES (?, 'assistant', ?, ?, 'stop', 'Explain the backoff bound.')`, id, fmt.Sprintf("Step %d: %s%s", i, words, words[:100]), ts)
			}
			if err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkImportHermes100k imports a generated Hermes file of 100,000
// messages (1,000 sessions of 100) into a fresh store per iteration and
// reports the rate and the peak heap above the baseline.
// SESSIONDB_HERMES_KEEP=DIR keeps the generated state.db in DIR (to time
// `sessiondb import --from hermes` on it).
func BenchmarkImportHermes100k(b *testing.B) {
	dir := b.TempDir()
	if keep := os.Getenv("SESSIONDB_HERMES_KEEP"); keep != "" {
		dir = keep
	}
	src := filepath.Join(dir, "state.db")
	schema := filepath.Join("..", "..", "shared", "fixtures", "hermes", "schema.sql")
	if fx := os.Getenv("SESSIONDB_HERMES_FIXTURE"); fx != "" {
		schema = filepath.Join(fx, "schema.sql")
	}
	if _, err := os.Stat(src); err != nil {
		writeHermesFile(b, schema, src, 1000, 100)
	}
	ctx := context.Background()
	var peak uint64
	var res hermes.Result
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s, err := db.Open(ctx, filepath.Join(b.TempDir(), "state.db"), db.Options{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		b.StartTimer()
		p := samplePeakHeap(func() {
			if res, err = hermes.Import(ctx, s.Store, src, hermes.Options{}); err != nil {
				b.Fatal(err)
			}
		})
		b.StopTimer()
		if p > base.HeapInuse && p-base.HeapInuse > peak {
			peak = p - base.HeapInuse
		}
		s.Close()
		b.StartTimer()
	}
	if res.Messages != 100_000 || res.Imported != 1000 {
		b.Fatalf("imported %+v, want 1000 sessions and 100,000 messages", res)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(res.Messages)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// registerSQLite has the SQLite engine register its driver's extensions
// (FTS5, which Hermes's triggers write to) before the benchmark writes a
// Hermes file: the engine does so on its first connection.
func registerSQLite(tb testing.TB) {
	tb.Helper()
	s, err := db.Open(context.Background(), filepath.Join(tb.TempDir(), "register.db"), db.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	s.Close()
}

// samplePeakHeap runs fn and returns the highest HeapInuse seen while it
// ran, sampled every millisecond.
func samplePeakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	return peak.Load()
}
