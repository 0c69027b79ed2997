package prometheus_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/metrics"
	sessionprom "github.com/sessiondb/sessiondb/metrics/prometheus"
	"github.com/sessiondb/sessiondb/pg"
)

// openSQLite opens a real SQLite store in a temporary directory.
func openSQLite(t *testing.T) *db.Store {
	t.Helper()
	st, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openPostgres opens a real PostgreSQL store in a schema of its own on
// SESSIONDB_PG_DSN's server, dropped when the test ends. Without a server
// it skips locally, saying how to get one, and fails in CI.
func openPostgres(t *testing.T) *pg.Store {
	t.Helper()
	dsn := os.Getenv("SESSIONDB_PG_DSN")
	if dsn == "" {
		const how = "SESSIONDB_PG_DSN is not set: run `bash scripts/test.sh` from the repository root " +
			"(it starts a throwaway PostgreSQL cluster), or point SESSIONDB_PG_DSN at a server " +
			"(e.g. host=/tmp/pgsock port=5432 user=postgres dbname=postgres)"
		if os.Getenv("CI") == "true" {
			t.Fatal(how)
		}
		t.Skip(how)
	}
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	schema := "metrics_" + hex.EncodeToString(b)
	st, err := pg.Open(context.Background(), dsn, pg.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return st
}

// serve registers a Collector over src in a registry of its own and
// serves it on a real HTTP server, returning the /metrics URL.
func serve(t *testing.T, src metrics.Source) string {
	t.Helper()
	reg := prom.NewPedanticRegistry() // checks each metric against its description
	reg.MustRegister(sessionprom.NewCollector(src))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// scrape fetches url and parses the text exposition format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}
