package pg

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sessiondb/sessiondb/pg/internal/pggen"
	"github.com/sessiondb/sessiondb/store"
)

// The listing's order lives in session_activity (migration 14), so that no
// index of sessions names a column an append changes. These tests hold
// the three rules of that design: an append's update of its session is
// HOT, the listing's order is the exact activity order across and within
// the ten-second buckets, and the listing reads the bucket index.

// openBucketStore is a store and a pool on its schema, for reading the
// server's statistics and plans of that store's tables.
func openBucketStore(t *testing.T) (*Store, *pgxpool.Pool) {
	t.Helper()
	schema := freshSchema(t)
	s, err := Open(t.Context(), testDSN(t), Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, openPool(t, testDSN(t), schema)
}

// TestAppend_SessionUpdateIsHOT: appends within one bucket rewrite their
// session's row without new index entries (pg_stat_user_tables counts
// them as HOT). Before migration 14 none was: the listing's index named
// conversation_active_at.
func TestAppend_SessionUpdateIsHOT(t *testing.T) {
	s, pool := openBucketStore(t)
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "hot", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	const appends = 40
	// Each message later than the one before, all in one bucket an hour
	// from now: every append moves conversation_active_at, the first
	// moves the bucket, and no other does.
	base := time.UnixMilli((time.Now().UnixMilli()/10_000 + 360) * 10_000)
	for i := range appends {
		if _, err := s.AppendMessage(ctx, "hot", store.NewMessage{Role: "user", Content: fmt.Sprint("turn ", i),
			CreatedAt: base.Add(time.Duration(i) * 100 * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	// Statistics reach the server's counters when each backend flushes
	// them (at most ~10 s after its last transaction): poll.
	var upd, hot int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := pool.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
			WHERE relid = 'sessions'::regclass`).Scan(&upd, &hot); err != nil {
			t.Fatal(err)
		}
		if upd >= appends || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if upd < appends {
		t.Fatalf("sessions counted %d updates after %d appends (statistics not flushed in 30 s?)", upd, appends)
	}
	// The first append moved the session from its start's bucket.
	if hot < upd-1 {
		t.Errorf("%d of %d updates of sessions were HOT, want all but at most one: an index of sessions names a column an append changes", hot, upd)
	}
}

// TestRecentSessions_ExactOrderAcrossBuckets: sessions whose activity
// falls in one bucket, in neighbouring ones and on their boundaries are
// listed by their exact activity (then id), page after page, and
// ActiveSince cuts at the exact time, not at the bucket.
func TestRecentSessions_ExactOrderAcrossBuckets(t *testing.T) {
	s, _ := openBucketStore(t)
	ctx := t.Context()
	// A bucket boundary (a multiple of 10,000 ms) an hour from now: a
	// session's activity is never before its start, which is now.
	base := time.UnixMilli((time.Now().UnixMilli()/10_000 + 360) * 10_000)
	offsets := map[string]int64{ // ms after base
		"a": 0, "b": 1, "c": 9_999, "d": 10_000, "e": 10_001, "f": 25_000,
		"g": 25_000, "h": -1, "i": 19_999, "j": 5_000,
	}
	for id, off := range offsets {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
		if err := s.TouchActivity(ctx, id, base.Add(time.Duration(off)*time.Millisecond), "", ""); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"g", "f", "i", "e", "d", "c", "j", "b", "a", "h"}
	var got []string
	for sum, err := range s.AllRecentSessions(ctx, store.RecentQuery{Limit: 3}) { // pages of 3
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sum.ID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing order (-want +got):\n%s", diff)
	}

	page, err := s.RecentSessions(ctx, store.RecentQuery{ActiveSince: base.Add(10_001 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, r := range page.Sessions {
		got = append(got, r.ID)
	}
	if diff := cmp.Diff([]string{"g", "f", "i", "e"}, got); diff != "" {
		t.Errorf("ActiveSince base+10.001s (-want +got):\n%s", diff)
	}
}

// TestRecentSessions_ReadsTheBucketIndex: on a store of some thousands
// of sessions, a listing's first page and a later one are planned as a
// walk of session_activity_recent, not a scan and sort of every session.
func TestRecentSessions_ReadsTheBucketIndex(t *testing.T) {
	s, pool := openBucketStore(t)
	ctx := t.Context()
	// Sessions made by SQL: thousands through the API take a minute. The
	// trigger gives each its session_activity row, as for any writer.
	if _, err := pool.Exec(ctx, `INSERT INTO sessions (id, source, started_at)
		SELECT 'bulk-' || g, 'test', 1700000000000 + g * 1000 FROM generate_series(1, 5000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE sessions; ANALYZE session_activity"); err != nil {
		t.Fatal(err)
	}
	var rows int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM session_activity").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 5000 {
		t.Fatalf("session_activity holds %d rows for 5,000 sessions inserted by SQL", rows)
	}
	after, afterID := int64(1700000000000+2500*1000), "bulk-2500"
	for _, p := range []pggen.SessionRecentParams{
		{RowLimit: 51},
		{RowLimit: 51, AfterAt: &after, AfterID: afterID},
	} {
		sql, args := recorded(func(db pggen.DBTX) error {
			_, err := pggen.New().SessionRecent(context.Background(), db, p)
			return err
		})
		var plan []string
		rows, err := pool.Query(ctx, "EXPLAIN "+sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		if !strings.Contains(text, "session_activity_recent") || strings.Contains(text, "Seq Scan on sessions") {
			t.Errorf("the listing (after %v) does not walk session_activity_recent:\n%s", p.AfterAt != nil, text)
		}
	}
	page, err := s.RecentSessions(ctx, store.RecentQuery{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 2 || page.Sessions[0].ID != "bulk-5000" || page.Sessions[1].ID != "bulk-4999" {
		t.Errorf("first page of sessions inserted by SQL: %+v", page.Sessions)
	}
}
