package db

import (
	"errors"
	"path/filepath"
	"testing"
)

// A file migrated by a newer sessiondb is refused, not written with older
// rules (goose alone would ignore the versions it does not know).
func TestOpen_RefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	damage(t, path, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, 1)")
	s, err = Open(t.Context(), path, Options{})
	if !errors.Is(err, ErrSchemaTooNew) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a version-99 file = %v, want ErrSchemaTooNew", err)
	}
	t.Log(err)
}
