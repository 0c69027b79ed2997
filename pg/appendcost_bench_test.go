package pg

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store"
)

// BenchmarkAppendCost sizes what the server spends per append: 16
// appenders on sessions of their own, as BenchmarkAppendMessage_OwnSessions,
// once on the schema as migrated and once with each suspect dropped from
// it, reporting the server's CPU a message (the whole cluster's: its
// backends, WAL writer, checkpointer and autovacuum, read from /proc, so
// only for a server on this machine that this process may read) beside the
// rate. Dropping (or adding) an index is an experiment, never the
// engine's schema: search needs the GIN indexes. docs/PERFORMANCE.md,
// "What bounds each figure now", holds the figures.
func BenchmarkAppendCost(b *testing.B) {
	variants := []struct{ name, drop string }{
		{"schema", ""},
		{"no-gin", "DROP INDEX messages_words, messages_trigram, messages_tool_trigram"},
		{"no-words", "DROP INDEX messages_words"},
		{"no-trigram", "DROP INDEX messages_trigram, messages_tool_trigram"},
		// The listing's index as it was on sessions before migration 14:
		// every append's update of its session not HOT.
		{"non-hot-sessions", "CREATE INDEX sessions_conversation_active ON sessions (COALESCE(conversation_active_at, started_at) DESC, id DESC)"},
		{"fold-plpgsql", `CREATE OR REPLACE FUNCTION sessiondb_fold(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
			AS $$BEGIN RETURN pg_catalog.regexp_replace(public.unaccent('public.unaccent'::regdictionary, t), '[^[:alnum:]]+', ' ', 'g'); END$$`},
		{"gin-fastupdate-off", "ALTER INDEX messages_words SET (fastupdate = off); ALTER INDEX messages_trigram SET (fastupdate = off); " +
			"ALTER INDEX messages_tool_trigram SET (fastupdate = off)"},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			pool := benchPool(b, 0, nil)
			s := benchStore(b, pool)
			ctx := context.Background()
			if v.drop != "" {
				if _, err := pool.Exec(ctx, v.drop); err != nil {
					b.Fatal(err)
				}
			}
			const appenders = 16
			for w := range appenders {
				if _, err := s.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("cost-", w), Source: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
			cpu := serverCPU(b, pool)
			before := cpu()
			r := runOps(b, appenders, func(w, i int) error {
				_, err := s.AppendMessage(ctx, fmt.Sprint("cost-", w), benchMessage(i))
				return err
			})
			after := cpu()
			r.report(b, nil)
			reportServerCPU(b, before, after)
		})
	}
}

// serverCPU returns a reader of the benchmark server's CPU seconds so far
// (its postmaster, the children it reaped and those running), or of -1
// when the server's processes cannot be read from here.
func serverCPU(b *testing.B, pool *pgxpool.Pool) func() float64 {
	b.Helper()
	var dir string
	if err := pool.QueryRow(context.Background(), "SHOW data_directory").Scan(&dir); err != nil {
		return func() float64 { return -1 }
	}
	pidFile, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return func() float64 { return -1 }
	}
	pm := strings.SplitN(string(pidFile), "\n", 2)[0]
	const tick = 100.0 // USER_HZ on Linux
	fields := func(pid string) []string {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return nil
		}
		s := string(stat)
		return strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from state on: utime is [11]
	}
	sum := func(f []string, idx ...int) float64 {
		var t float64
		for _, i := range idx {
			if i < len(f) {
				n, _ := strconv.ParseFloat(f[i], 64)
				t += n
			}
		}
		return t
	}
	return func() float64 {
		pf := fields(pm)
		if pf == nil {
			return -1
		}
		total := sum(pf, 11, 12, 13, 14) // utime, stime, cutime, cstime
		children, _ := os.ReadFile("/proc/" + pm + "/task/" + pm + "/children")
		for _, c := range strings.Fields(string(children)) {
			total += sum(fields(c), 11, 12)
		}
		return total / tick
	}
}

// reportServerCPU reports the server's CPU a message between two
// readings of serverCPU, when it could be read.
func reportServerCPU(b *testing.B, before, after float64) {
	if before >= 0 && after >= 0 {
		b.ReportMetric((after-before)*1e6/float64(b.N), "server-µs/msg")
	}
}
