package db

import (
	"testing"
)

// Version 18 adds the reference store's last fields and back-fills the two
// that follow from what a file holds: a delegate's mark (delegated_from,
// its parent) and each continuation's conversation start (root_started_at,
// its compression root's start, through a chain of any length). The file
// verifies afterwards, and Down and Up again give the same.
func TestMigrate_Version18ReferenceFields(t *testing.T) {
	path := filledStore(t)
	migrateDownTo(t, path, 17)
	damage(t, path,
		"INSERT INTO sessions (id, source, started_at) VALUES ('mr', 'cli', 1000)",
		"INSERT INTO sessions (id, source, started_at, parent_session_id, parent_kind) VALUES ('mc1', 'cli', 2000, 'mr', 'compression')",
		"INSERT INTO sessions (id, source, started_at, parent_session_id, parent_kind) VALUES ('mc2', 'cli', 3000, 'mc1', 'compression')",
		"INSERT INTO sessions (id, source, started_at, parent_session_id, parent_kind) VALUES ('md', 'cli', 4000, 'mc2', 'delegate')",
		"INSERT INTO sessions (id, source, started_at, parent_session_id, parent_kind) VALUES ('mb', 'cli', 5000, 'mr', 'branch')")
	for range 2 {
		migrateUpTo(t, path, 18)
		if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
			t.Fatalf("Verify after version 18 = %+v, %v", r, err)
		}
		s, err := Open(t.Context(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]struct {
			root int64
			from string
		}{"mr": {1000, ""}, "mc1": {1000, ""}, "mc2": {1000, ""}, "md": {4000, "mc2"}, "mb": {5000, ""}} {
			got, err := s.Session(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if got.RootStartedAt.UnixMilli() != want.root || got.DelegatedFrom != want.from {
				t.Errorf("%s: root started %d, delegated from %q; want %d, %q", id, got.RootStartedAt.UnixMilli(), got.DelegatedFrom, want.root, want.from)
			}
		}
		s.Close()
		migrateDownTo(t, path, 17)
	}
}
