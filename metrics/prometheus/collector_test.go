package prometheus_test

import (
	"context"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/sessiondb/sessiondb/metrics"
	"github.com/sessiondb/sessiondb/store"
)

// Every metric a scrape shows, by engine: SQLite's lock waits, index lag
// and WAL size have no PostgreSQL counterpart.
var (
	commonMetrics = []string{
		"sessiondb_store_info", "sessiondb_appends_total", "sessiondb_writes_total", "sessiondb_batches_total",
		"sessiondb_reruns_total", "sessiondb_lock_timeouts_total", "sessiondb_commit_duration_seconds",
		"sessiondb_pool_max_connections", "sessiondb_pool_connections", "sessiondb_pool_waits_total",
		"sessiondb_pool_wait_seconds_total",
	}
	sqliteOnly = []string{
		"sessiondb_lock_retries_total", "sessiondb_lock_wait_seconds_total", "sessiondb_index_pending_changes",
		"sessiondb_index_lag_seconds", "sessiondb_wal_size_bytes",
	}
)

// TestCollectorOverRealStores registers the collector over a real store
// of each engine, scrapes it through a real HTTP server, appends, and
// scrapes again: the counters move by what was written.
func TestCollectorOverRealStores(t *testing.T) {
	engines := []struct {
		name string
		open func(t *testing.T) (metrics.Source, *store.Store)
		want []string
	}{
		{"sqlite", func(t *testing.T) (metrics.Source, *store.Store) { st := openSQLite(t); return st, st.Store }, append(slices.Clone(commonMetrics), sqliteOnly...)},
		{"postgres", func(t *testing.T) (metrics.Source, *store.Store) { st := openPostgres(t); return st, st.Store }, commonMetrics},
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			src, st := e.open(t)
			url := serve(t, src)
			before := scrape(t, url)

			var names []string
			for name := range before {
				names = append(names, name)
			}
			slices.Sort(names)
			want := slices.Sorted(slices.Values(e.want))
			if !slices.Equal(names, want) {
				t.Errorf("metrics scraped:\n%q\nwant:\n%q", names, want)
			}
			if v := gaugeWith(t, before, "sessiondb_store_info", "engine", e.name); v != 1 {
				t.Errorf("sessiondb_store_info{engine=%q} = %v, want 1", e.name, v)
			}

			sess, err := st.CreateSession(ctx, store.NewSession{ID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.AppendMessages(ctx, sess.ID, []store.NewMessage{
				{Role: store.RoleUser, Content: "one"}, {Role: store.RoleAssistant, Content: "two"}, {Role: store.RoleUser, Content: "three"},
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.AppendMessage(ctx, sess.ID, store.NewMessage{Role: store.RoleAssistant, Content: "four"}); err != nil {
				t.Fatal(err)
			}
			after := scrape(t, url)

			delta := func(name string) float64 { return value(t, after, name) - value(t, before, name) }
			if d := delta("sessiondb_appends_total"); d != 4 {
				t.Errorf("sessiondb_appends_total moved by %v after 4 messages appended, want 4", d)
			}
			writes, batches := delta("sessiondb_writes_total"), delta("sessiondb_batches_total")
			if writes < 3 {
				t.Errorf("sessiondb_writes_total moved by %v after a session and 2 appends, want ≥ 3", writes)
			}
			if batches < 1 || batches > writes {
				t.Errorf("sessiondb_batches_total moved by %v, want between 1 and the writes' %v", batches, writes)
			}
			h := after["sessiondb_commit_duration_seconds"].GetMetric()[0].GetHistogram()
			if got := float64(h.GetSampleCount()) - float64(before["sessiondb_commit_duration_seconds"].GetMetric()[0].GetHistogram().GetSampleCount()); got != batches {
				t.Errorf("commit_duration_seconds count moved by %v, want the batches' %v", got, batches)
			}
			if h.GetSampleSum() <= 0 {
				t.Errorf("commit_duration_seconds sum = %v after commits, want > 0", h.GetSampleSum())
			}
			// The text format adds the +Inf bucket, which holds every sample.
			if b := h.GetBucket(); len(b) != len(metrics.DurationBounds)+1 || b[len(b)-1].GetCumulativeCount() != h.GetSampleCount() || b[0].GetUpperBound() != 0.0005 {
				t.Errorf("commit_duration_seconds buckets = %v (count %d), want %d cumulative buckets from 0.0005 s to +Inf", b, h.GetSampleCount(), len(metrics.DurationBounds)+1)
			}
			if e.name == "postgres" {
				if v := value(t, after, "sessiondb_pool_max_connections"); v != 4 {
					t.Errorf("sessiondb_pool_max_connections = %v, want pg's default 4", v)
				}
				if v := gaugeWith(t, after, "sessiondb_pool_connections", "state", "idle"); v < 1 {
					t.Errorf("sessiondb_pool_connections{state=idle} = %v after writes, want ≥ 1", v)
				}
			} else {
				if v := value(t, after, "sessiondb_wal_size_bytes"); v <= 0 {
					t.Errorf("sessiondb_wal_size_bytes = %v after commits, want > 0", v)
				}
				if v := value(t, after, "sessiondb_index_pending_changes"); v < 0 || v > 4 {
					t.Errorf("sessiondb_index_pending_changes = %v, want between 0 and the 4 messages", v)
				}
			}
		})
	}
}

// value is the single sample of a counter or gauge family.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok || len(f.GetMetric()) != 1 {
		t.Fatalf("%s: want one sample, got %v", name, f)
	}
	m := f.GetMetric()[0]
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// gaugeWith is the gauge sample of family name whose label is value.
func gaugeWith(t *testing.T, fams map[string]*dto.MetricFamily, name, label, val string) float64 {
	t.Helper()
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == val {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("%s{%s=%q}: no such sample in %v", name, label, val, fams[name])
	return 0
}
