package prometheus_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCollectorLinksNoEngine holds the collector's promise: it reads a
// store through package metrics alone, so a program exporting a SQLite
// store's metrics does not link pgx, nor a PostgreSQL one the SQLite
// driver. (The tests open both engines; they are not linked into users'
// programs.)
func TestCollectorLinksNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test=false", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	sawClient, sawMetrics := false, false
	for _, d := range deps {
		switch {
		case d == "github.com/prometheus/client_golang/prometheus":
			sawClient = true
		case d == "github.com/sessiondb/sessiondb/metrics":
			sawMetrics = true
		case d == "github.com/sessiondb/sessiondb/db", strings.HasPrefix(d, "github.com/sessiondb/sessiondb/db/"),
			strings.HasPrefix(d, "github.com/sessiondb/sessiondb/pg"), strings.HasPrefix(d, "github.com/ncruces/"),
			strings.HasPrefix(d, "github.com/jackc/"):
			t.Errorf("the collector depends on %s", d)
		}
	}
	if !sawClient || !sawMetrics {
		t.Errorf("go list -deps lists neither the Prometheus client nor package metrics, so it proves nothing:\n%s", out)
	}
}
