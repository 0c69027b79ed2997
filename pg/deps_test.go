package pg

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDepsLeaveSQLiteOut holds the module's promise to PostgreSQL users:
// nothing here links the SQLite engine (package db and its driver), only
// the domain, the seam and shared leaves. Nor a metrics client: the
// Prometheus collector is a module of its own (metrics/prometheus).
func TestDepsLeaveSQLiteOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), "github.com/jackc/pgx/v5") {
		t.Fatalf("go list -deps gave %d packages, without pgx: not this module's list", len(deps))
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "github.com/ncruces/") || p == "github.com/sessiondb/sessiondb/db" ||
			strings.HasPrefix(p, "github.com/prometheus/") || strings.HasPrefix(p, "go.opentelemetry.io/") {
			t.Errorf("the pg module depends on %s", p)
		}
	}
}
