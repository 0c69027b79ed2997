package pg

import (
	"context"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite catalog.golden from a freshly migrated schema")

// catalog.golden is the catalog of a freshly migrated schema: a migration
// that changes the schema must regenerate it (go test -run
// TestCatalogGolden -update), or Verify and Open would call its objects
// foreign.
func TestCatalogGolden(t *testing.T) {
	pool := migratedPool(t)
	ctx := context.Background()
	schema, _ := SchemaOf(pool.Config())
	have, err := readCatalog(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	var version string
	if err := pool.QueryRow(ctx, "SHOW server_version_num").Scan(&version); err != nil {
		t.Fatal(err)
	}
	got := formatCatalog(have, version)
	if *update {
		if err := os.WriteFile("catalog.golden", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, _ := goldenCatalog()
	if diff := cmp.Diff(want, have, cmp.AllowUnexported(catalogEntry{})); diff != "" {
		t.Errorf("a fresh schema's catalog differs from catalog.golden (-golden +fresh); if a migration changed "+
			"the schema, run go test -run TestCatalogGolden -update:\n%s", diff)
	}
	if f := catalogFindings(have, version[:len(version)-4]); len(f) != 0 {
		t.Errorf("findings on a fresh schema: %q", f)
	}
}
