package pg

import (
	"context"
	"fmt"
	"testing"

	"github.com/sessiondb/sessiondb/store"
)

// BenchmarkSessionTableSize appends b.N messages to 1,000 sessions from
// 64 appenders, then reports the size of the sessions table (heap, and
// with its indexes and TOAST) and the share of its row updates that were
// HOT (no new index entries): what an append's rewrite of its session's
// row costs on disk (issue 33: 1,000 sessions took 39 MB after 1M
// appends). Autovacuum runs as configured on the server; the figure is
// read at once after the appends, then again after a VACUUM.
func BenchmarkSessionTableSize(b *testing.B) {
	const sessions, appenders = 1000, 64
	pool := benchPool(b, 0, nil)
	s := benchStore(b, pool)
	ctx := context.Background()
	for i := range sessions {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("size-", i), Source: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	runOps(b, appenders, func(w, i int) error {
		_, err := s.AppendMessage(ctx, fmt.Sprint("size-", i%sessions), benchMessage(i))
		return err
	})
	b.StopTimer()
	report := func(suffix string) {
		var heap, total, upd, hot int64
		err := pool.QueryRow(ctx, `SELECT pg_relation_size('sessions'), pg_total_relation_size('sessions'),
			COALESCE(n_tup_upd, 0), COALESCE(n_tup_hot_upd, 0) FROM pg_stat_user_tables WHERE relid = 'sessions'::regclass`).
			Scan(&heap, &total, &upd, &hot)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(heap)/(1<<20), "heap-MB"+suffix)
		b.ReportMetric(float64(total)/(1<<20), "total-MB"+suffix)
		if upd > 0 && suffix == "" {
			b.ReportMetric(float64(hot)/float64(upd), "hot-share")
		}
	}
	if _, err := pool.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		b.Fatal(err)
	}
	report("")
	if _, err := pool.Exec(ctx, "VACUUM sessions"); err != nil {
		b.Fatal(err)
	}
	report("-vacuumed")
}
