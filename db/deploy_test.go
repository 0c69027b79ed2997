package db

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The deploy step: a file an older sessiondb left is refused by a
// NoMigrate open (named versions, nothing written), reported behind by
// SchemaVersion, brought up by Migrate, then opened without migrating.
func TestDeploy_MigrateThenOpenWithoutMigrating(t *testing.T) {
	ctx := t.Context()
	path := fileAtVersion(t, 5)
	latest := latestMigration()

	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path, Options{NoMigrate: true})
	var behind *SchemaBehindError
	if !errors.As(err, &behind) || !errors.Is(err, ErrSchemaBehind) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("NoMigrate Open of a version-5 file = %v, want a *SchemaBehindError", err)
	}
	if behind.Have != 5 || behind.Want != latest {
		t.Errorf("SchemaBehindError{Have: %d, Want: %d}, want {5, %d}", behind.Have, behind.Want, latest)
	}
	st, err := SchemaVersion(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 5 || st.Latest != latest || !st.Behind() || st.Current() {
		t.Errorf("SchemaVersion after a refused open = %+v, want version 5 of %d, behind", st, latest)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a refused NoMigrate open changed the file")
	}

	m, err := Migrate(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.From != 5 || m.To != latest || !m.Applied() {
		t.Errorf("Migrate = %+v, want from 5 to %d", m, latest)
	}
	if st, err = SchemaVersion(ctx, path); err != nil || !st.Current() {
		t.Errorf("SchemaVersion after Migrate = %+v, %v, want current", st, err)
	}
	s, err = Open(ctx, path, Options{NoMigrate: true})
	if err != nil {
		t.Fatalf("NoMigrate Open of a current file: %v", err)
	}
	newTestSession(t, s, "after-deploy")
	s.Close()
	if m, err = Migrate(ctx, path, Options{}); err != nil || m.Applied() || m.From != latest {
		t.Errorf("a second Migrate = %+v, %v, want nothing applied at %d", m, err, latest)
	}
}

// What each bad input gets from the deploy calls; none creates or changes
// a file.
func TestDeploy_BadInput(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")

	if s, err := Open(ctx, missing, Options{NoMigrate: true}); !errors.Is(err, ErrSchemaBehind) {
		if s != nil {
			s.Close()
		}
		t.Errorf("NoMigrate Open of a missing file = %v, want ErrSchemaBehind", err)
	}
	if _, err := SchemaVersion(ctx, missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("SchemaVersion of a missing file = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused open or a status created %s", missing)
	}

	notes := filepath.Join(dir, "notes.txt")
	text := []byte("not a database, and not ours to touch\n")
	if err := os.WriteFile(notes, text, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := SchemaVersion(ctx, notes); !errors.Is(err, ErrNotAStore) {
		t.Errorf("SchemaVersion of a text file = %v, want ErrNotAStore", err)
	}
	if got, _ := os.ReadFile(notes); !bytes.Equal(got, text) {
		t.Error("SchemaVersion changed a file that is not ours")
	}

	if _, err := SchemaVersion(ctx, dir); !errors.Is(err, ErrNotAStore) {
		t.Errorf("SchemaVersion of a directory = %v, want ErrNotAStore", err)
	}
	if _, err := Migrate(ctx, missing, Options{ReadOnly: true}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Migrate with ReadOnly = %v, want ErrInvalidInput", err)
	}

	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := SchemaVersion(ctx, empty); err != nil || st.Version != 0 || !st.Behind() {
		t.Errorf("SchemaVersion of an empty file = %+v, %v, want version 0, behind", st, err)
	}
	if s, err := Open(ctx, empty, Options{NoMigrate: true}); !errors.Is(err, ErrSchemaBehind) {
		if s != nil {
			s.Close()
		}
		t.Errorf("NoMigrate Open of an empty file = %v, want ErrSchemaBehind", err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("a refused NoMigrate open wrote to an empty file: %v", err)
	}
}

// A file a newer sessiondb migrated is ErrSchemaTooNew under NoMigrate
// too, and SchemaVersion says it is ahead.
func TestDeploy_NewerFile(t *testing.T) {
	path := fileAtVersion(t, latestMigration(), "INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, 1)")
	if s, err := Open(t.Context(), path, Options{NoMigrate: true}); !errors.Is(err, ErrSchemaTooNew) {
		if s != nil {
			s.Close()
		}
		t.Errorf("NoMigrate Open of a version-99 file = %v, want ErrSchemaTooNew", err)
	}
	if st, err := SchemaVersion(t.Context(), path); err != nil || st.Version != 99 || !st.Ahead() {
		t.Errorf("SchemaVersion of a version-99 file = %+v, %v, want version 99, ahead", st, err)
	}
}
