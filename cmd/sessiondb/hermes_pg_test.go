package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/hermes/hermestest"
	"github.com/sessiondb/sessiondb/pg"
	"github.com/sessiondb/sessiondb/store"
)

// TestImportHermesPostgres runs the Hermes importer's suite on PostgreSQL
// stores (package hermes runs it on SQLite ones): this module is the one
// that links both engines. Each test works in a schema of its own.
func TestImportHermesPostgres(t *testing.T) {
	hermestest.Run(t, hermestest.Engine{
		Open: func(t *testing.T) *store.Store {
			s, err := pg.Open(t.Context(), serverURL(t), pg.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s.Store
		},
		FixtureDir: filepath.Join("..", "..", "..", "shared", "fixtures", "hermes"),
	})
}

// TestImportHermesCommandPostgres: `import --from hermes FILE --db
// postgres://…` imports into the server, and a second run finds nothing
// new, as on a SQLite file.
func TestImportHermesCommandPostgres(t *testing.T) {
	src := hermesFixture(t)
	u := serverURL(t)
	code, out, stderr := runCLI(t, u, "import", "--from", "hermes", src)
	if code != exitOK || !strings.Contains(out, "7 new sessions") || !strings.Contains(out, "29 messages") {
		t.Fatalf("import into PostgreSQL: exit %d\n%s%s", code, out, stderr)
	}
	if n := serverRows(t, u, "messages"); n != 29 {
		t.Errorf("the server holds %d messages, want 29", n)
	}
	code, out, stderr = runCLI(t, u, "import", "--from", "hermes", src)
	if code != exitOK || !strings.HasPrefix(out, "nothing new in ") {
		t.Errorf("second import: exit %d\n%s%s", code, out, stderr)
	}
}
