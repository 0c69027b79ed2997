package db

import (
	"context"
	"strings"
	"testing"
)

// tableSQL is the CREATE statement sqlite_schema holds for table at path.
func tableSQL(t *testing.T, path, table string) string {
	t.Helper()
	d, err := openDB(path, kindProbe, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var stmt string
	// Hand-written: sqlc cannot see sqlite_schema.
	if err := d.QueryRowContext(t.Context(), "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", table).Scan(&stmt); err != nil {
		t.Fatal(err)
	}
	return stmt
}

// schemaCookie is the file's PRAGMA schema_version (the schema cookie).
func schemaCookie(t *testing.T, path string) int64 {
	t.Helper()
	d, err := openDB(path, kindProbe, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v, err := schemaVersion(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Version 15 rewrites the CHECK constraints that listed values as
// comparisons, in place (the rows stay as they are), moves schema_version
// on so that connections read the schema again, and its Down step gives
// back exactly the statements version 14 had.
func TestMigrate_Version15ChecksWithoutLists(t *testing.T) {
	path := filledStore(t)
	migrateDownTo(t, path, 14)
	old := map[string]string{"messages": tableSQL(t, path, "messages"), "sessions": tableSQL(t, path, "sessions")}
	for table, stmt := range old {
		if !strings.Contains(stmt, " IN ('") {
			t.Fatalf("%s at version 14 has no list check: %s", table, stmt)
		}
	}
	before := schemaCookie(t, path)

	migrateUpTo(t, path, 15)
	for _, table := range []string{"messages", "sessions"} {
		if stmt := tableSQL(t, path, table); strings.Contains(stmt, " IN ('") {
			t.Errorf("%s after version 15 still lists values: %s", table, stmt)
		}
	}
	if after := schemaCookie(t, path); after != before+1 {
		t.Errorf("schema_version %d -> %d, want one more", before, after)
	}
	if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
		t.Fatalf("Verify after version 15 = %+v, %v", r, err)
	}

	migrateDownTo(t, path, 14)
	for table, stmt := range old {
		if got := tableSQL(t, path, table); got != stmt {
			t.Errorf("%s after Down:\n%s\nwant\n%s", table, got, stmt)
		}
	}
}

// A check not written exactly as the migrations wrote it is left alone
// (Verify reports the statement, as before); the others are rewritten all
// the same.
func TestMigrate_Version15LeavesAForeignStatement(t *testing.T) {
	path := filledStore(t)
	migrateDownTo(t, path, 14)
	damage(t, path, "PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = replace(sql, 'role IN (''system'', ''user'',', 'role IN (''system'',''user'',') WHERE name = 'messages'",
		"PRAGMA writable_schema = OFF")
	migrateUpTo(t, path, 15)
	got := tableSQL(t, path, "messages")
	if !strings.Contains(got, "CHECK (role IN ('system','user', 'assistant', 'tool'))") {
		t.Errorf("a foreign check was rewritten:\n%s", got)
	}
	if !strings.Contains(got, "CHECK (state = 'active' OR state = 'compacted' OR state = 'rewound')") {
		t.Errorf("the state check beside a foreign one was not rewritten:\n%s", got)
	}
	if got := tableSQL(t, path, "sessions"); strings.Contains(got, " IN ('") {
		t.Errorf("sessions not rewritten: %s", got)
	}
}

// What each check accepts and refuses, written past the store with SQL
// as another program would: the same values as the lists did.
func TestChecks_AcceptAndRefuseTheSameValues(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "a")
	path := s.Path()
	s.Close()
	tests := []struct {
		name string
		stmt string
		ok   bool
	}{
		{"each role", "INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'system', '', 1), ('a', 'user', '', 1), ('a', 'assistant', '', 1), ('a', 'tool', '', 1), ('a', 'note', '', 1)", true},
		{"an unknown role", "INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'robot', '', 1)", false},
		{"a role in other case", "INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'User', '', 1)", false},
		{"each state", "INSERT INTO messages (session_id, role, content, created_at, state) VALUES ('a', 'user', '', 1, 'active'), ('a', 'user', '', 1, 'compacted'), ('a', 'user', '', 1, 'rewound')", true},
		{"an unknown state", "INSERT INTO messages (session_id, role, content, created_at, state) VALUES ('a', 'user', '', 1, 'gone')", false},
		{"a state changed to an unknown one", "INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', '', 1); UPDATE messages SET state = 'gone' WHERE session_id = 'a'", false},
		{"each handoff state", "UPDATE sessions SET handoff_state = 'pending' WHERE id = 'a'; UPDATE sessions SET handoff_state = 'running' WHERE id = 'a'; UPDATE sessions SET handoff_state = 'completed' WHERE id = 'a'; UPDATE sessions SET handoff_state = 'failed' WHERE id = 'a'", true},
		{"no handoff state", "UPDATE sessions SET handoff_state = NULL WHERE id = 'a'", true},
		{"an unknown handoff state", "UPDATE sessions SET handoff_state = 'lost' WHERE id = 'a'", false},
		{"each parent kind", "INSERT INTO sessions (id, started_at, parent_session_id, parent_kind) VALUES ('b1', 1, 'a', 'compression'), ('b2', 1, 'a', 'branch'), ('b3', 1, 'a', 'delegate'), ('b4', 1, 'a', 'reset'), ('b5', 1, 'a', 'tool')", true},
		{"no parent kind", "INSERT INTO sessions (id, started_at) VALUES ('c', 1)", true},
		{"an unknown parent kind", "INSERT INTO sessions (id, started_at, parent_session_id, parent_kind) VALUES ('d', 1, 'a', 'fork')", false},
	}
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.ExecContext(t.Context(), tt.stmt)
			switch {
			case tt.ok && err != nil:
				t.Errorf("refused: %v", err)
			case !tt.ok && err == nil:
				t.Error("accepted")
			case !tt.ok && !strings.Contains(err.Error(), "CHECK constraint failed"):
				t.Errorf("refused with %v, want a CHECK constraint failure", err)
			}
		})
	}
}

// Inserting a message builds no temporary b-tree: a check that lists
// values is coded as a lookup in one, built for every row (version 15).
func TestChecks_InsertBuildsNoTemporaryTable(t *testing.T) {
	s := openTestStore(t, Options{})
	path := s.Path()
	s.Close()
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// A writable connection: a read-only one compiles no checks.
	for _, stmt := range []string{
		"INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'x', 1)",
		"UPDATE messages SET state = 'rewound' WHERE id = 1",
	} {
		rows, err := d.QueryContext(context.Background(), "EXPLAIN "+stmt)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if op, _ := vals[1].(string); op == "OpenEphemeral" {
				t.Errorf("%s opens a temporary b-tree", stmt)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
}
