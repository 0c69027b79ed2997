package db

import (
	"bytes"
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

// Repair refuses a newer file too: it would rebuild it into this build's
// schema.
func TestRepair_RefusesNewerSchema(t *testing.T) {
	path := filledStore(t)
	damage(t, path, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, 1)",
		"UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id > 10")
	if _, err := Repair(t.Context(), path, RepairOptions{Logger: testLogger(new(bytes.Buffer))}); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Repair of a version-99 file = %v, want ErrSchemaTooNew", err)
	}
}

func TestLatestMigration(t *testing.T) {
	files, err := filepath.Glob("../migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if got := latestMigration(); got != int64(len(files)) {
		t.Errorf("latestMigration() = %d, want %d (one file per version)", got, len(files))
	}
}
