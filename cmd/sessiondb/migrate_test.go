package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The deploy step on a file: status of a missing file (exit 3, nothing
// created), of an empty one (behind, exit 1), migrate (creates and
// migrates), status again (current), and a second migrate (nothing to do).
func TestMigrate_File(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	if code, _, stderr := cli(t, path, "migrate", "--status"); code != exitNotFound {
		t.Errorf("migrate --status of a missing file = %d (%q), want %d", code, stderr, exitNotFound)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("migrate --status created the file")
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := cli(t, empty, "migrate", "--status"); code != 1 || !strings.Contains(stdout, "schema version 0") || !strings.Contains(stdout, "behind") {
		t.Errorf("migrate --status of an empty file = %d, %q, want 1 saying version 0, behind", code, stdout)
	}

	code, stdout, stderr := cli(t, path, "migrate")
	if code != 0 || !strings.Contains(stdout, "migrated from schema version 0 to ") {
		t.Fatalf("migrate = %d, %q, %q, want 0 saying it migrated from 0", code, stdout, stderr)
	}
	code, stdout, _ = cli(t, path, "migrate", "--status", "--json")
	var st migrateJSON
	if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil || st.State != "current" || st.Version == nil || *st.Version != st.Latest {
		t.Errorf("migrate --status --json after migrate = %d, %q (%v), want 0, current", code, stdout, err)
	}
	if code, stdout, _ := cli(t, path, "migrate"); code != 0 || !strings.Contains(stdout, "nothing to migrate") {
		t.Errorf("a second migrate = %d, %q, want 0, nothing to migrate", code, stdout)
	}

	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("not ours\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, notes, "migrate", "--status", "--json"); code != exitNotAStore || !strings.Contains(stderr, `"not_a_store"`) {
		t.Errorf("migrate --status of a text file = %d, %q, want %d not_a_store", code, stderr, exitNotAStore)
	}
	if b, _ := os.ReadFile(notes); string(b) != "not ours\n" {
		t.Error("migrate --status changed a file that is not ours")
	}
}

// The deploy step on a PostgreSQL schema: behind before (version 0, no
// schema yet), migrated, current after.
func TestMigrate_Server(t *testing.T) {
	u := serverURL(t)
	if code, stdout, stderr := runCLI(t, u, "migrate", "--status"); code != 1 || !strings.Contains(stdout, "behind") {
		t.Errorf("migrate --status before = %d, %q, %q, want 1, behind", code, stdout, stderr)
	}
	code, stdout, stderr := runCLI(t, u, "migrate", "--json")
	var m migrateJSON
	if err := json.Unmarshal([]byte(stdout), &m); code != 0 || err != nil || m.Applied == nil || !*m.Applied || *m.From != 0 || *m.To != m.Latest {
		t.Fatalf("migrate --json = %d, %q, %q (%v), want 0, applied from 0", code, stdout, stderr, err)
	}
	if strings.Contains(stdout, "password") {
		t.Errorf("migrate printed a password: %q", stdout)
	}
	if code, stdout, _ := runCLI(t, u, "migrate", "--status"); code != 0 || !strings.Contains(stdout, ": current") {
		t.Errorf("migrate --status after = %d, %q, want 0, current", code, stdout)
	}
	if n := serverRows(t, u, "sessions"); n != 0 {
		t.Errorf("migrate wrote %d sessions", n)
	}
}
