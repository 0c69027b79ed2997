package eino_test

import (
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// openStore opens a real SQLite store at path (a fresh one when path is
// empty), closed when the test ends.
func openStore(t *testing.T, path string) *db.Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "state.db")
	}
	s, err := db.Open(t.Context(), path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
