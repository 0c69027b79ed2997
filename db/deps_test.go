package db_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSQLiteEngineLinksNoPostgres proves a SQLite user never links the
// PostgreSQL engine or pgx: the CLI links both engines, from its own
// module, and nothing of that may leak into the library's packages. (The
// module graph is no test: goose's go.mod already lists pgx among its
// dialects' drivers, though a program using goose's SQLite dialect does
// not link it.) Nor does it link a metrics client: the Prometheus
// collector is a module of its own (metrics/prometheus).
func TestSQLiteEngineLinksNoPostgres(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test=false", "github.com/sessiondb/sessiondb/db").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !containsPrefix(deps, "github.com/ncruces/go-sqlite3") {
		t.Fatalf("go list -deps does not list the SQLite driver db links, so it proves nothing: %q", deps)
	}
	for _, d := range deps {
		for _, pg := range []string{"github.com/jackc/", "github.com/sessiondb/sessiondb/pg", "github.com/sessiondb/sessiondb/cmd/",
			"github.com/prometheus/", "go.opentelemetry.io/"} {
			if strings.HasPrefix(d, pg) {
				t.Errorf("package db depends on %s", d)
			}
		}
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
