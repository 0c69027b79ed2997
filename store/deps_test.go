package store_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoEngineInTheDomain proves the domain links no engine: a PostgreSQL
// user must not link SQLite, and a SQLite user must not link pgx.
func TestNoEngineInTheDomain(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test=false",
		"github.com/sessiondb/sessiondb/store", "github.com/sessiondb/sessiondb/storetest").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %d packages: %q", len(deps), deps)
	}
	for _, d := range deps {
		for _, engine := range []string{"github.com/ncruces/", "github.com/jackc/pgx", "github.com/sessiondb/sessiondb/db", "github.com/sessiondb/sessiondb/pg"} {
			if strings.HasPrefix(d, engine) {
				t.Errorf("the domain depends on %s", d)
			}
		}
	}
}
