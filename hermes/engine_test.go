package hermes_test

import (
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/hermes/hermestest"
	"github.com/sessiondb/sessiondb/store"
)

// openSQLite opens a fresh SQLite store in a temporary directory.
func openSQLite(t *testing.T) *store.Store {
	t.Helper()
	s, err := db.Open(t.Context(), filepath.Join(t.TempDir(), "store.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Store
}

// TestImport runs the importer's suite on SQLite stores; the CLI's tests
// run it on PostgreSQL (TestImportHermesPostgres).
func TestImport(t *testing.T) {
	hermestest.Run(t, hermestest.Engine{Open: openSQLite, FixtureDir: filepath.Join("..", "..", "shared", "fixtures", "hermes")})
}
