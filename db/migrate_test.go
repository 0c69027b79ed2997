package db

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/migrations"
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
	sqlFiles, err := filepath.Glob("../migrations/0*_*.sql")
	if err != nil {
		t.Fatal(err)
	}
	want := int64(len(sqlFiles) + len(migrations.Go())) // one file per version, SQL or Go
	if got := latestMigration(); got != want {
		t.Errorf("latestMigration() = %d, want %d (one per version, SQL or Go)", got, want)
	}
}

// fileAtVersion makes a database at schema version v, as an older
// sessiondb left it (migrated down with the migrations' own Down steps),
// runs stmts on it and returns its path.
func fileAtVersion(t *testing.T, v int64, stmts ...string) string {
	t.Helper()
	s := openTestStore(t, Options{})
	path := s.Path()
	s.Close()
	migrateDownTo(t, path, v)
	damage(t, path, stmts...)
	return path
}

// The upgrade to version 10 rebuilds the full-text indexes; a damaged
// index (its config rows gone or wrong, its config table dropped, its
// segments zeroed) must not stop it, or every later Open: the upgrade
// goes through, the old message is found, and the file verifies.
func TestMigrate_Version10OverADamagedIndex(t *testing.T) {
	damages := []struct{ name, stmt string }{
		{"ConfigEmptied", "DELETE FROM messages_fts_config"},
		{"ConfigVersionWrong", "UPDATE messages_fts_config SET v = 99 WHERE k = 'version'"},
		{"ConfigDropped", "DROP TABLE messages_fts_config"},
		{"TrigramConfigEmptied", "DELETE FROM messages_fts_trigram_config"},
		{"SegmentsZeroed", "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id > 10"}, // passed before the fix too: a control
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			path := fileAtVersion(t, 9,
				"INSERT INTO sessions (id, source, started_at) VALUES ('a', 'test', 0)",
				"INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'an old turn about quince', 0)",
				d.stmt)
			s, err := Open(t.Context(), path, Options{Logger: testLogger(new(bytes.Buffer))})
			if err != nil {
				t.Fatalf("Open over %s: %v", d.name, err)
			}
			defer s.Close()
			if hits := searchContents(t, s, "quince"); len(hits) != 1 {
				t.Errorf("search after the upgrade: %v, want the old message", hits)
			}
			ftsConsistent(t, s)
			s.Close()
			if rep, err := Verify(t.Context(), path); err != nil || rep.Health != HealthVerified {
				t.Errorf("Verify after the upgrade = %s %q (%v)", rep.Health, rep.Details, err)
			}
		})
	}
}
