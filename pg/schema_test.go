package pg

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The constraints the SQLite schema enforces hold here too. Hand-written
// SQL: each statement breaks one rule on purpose.
func TestSchemaConstraints(t *testing.T) {
	pool := migratedPool(t)
	ctx := context.Background()
	for _, setup := range []string{
		"INSERT INTO sessions (id, started_at) VALUES ('p', 1), ('c', 2)",
		"UPDATE sessions SET parent_session_id = 'p', parent_kind = 'branch' WHERE id = 'c'",
		"INSERT INTO messages (session_id, role, idempotency_key, created_at) VALUES ('p', 'user', 'k', 1)",
		"INSERT INTO messages (session_id, role, platform_message_id, created_at) VALUES ('p', 'user', 'pm', 1)",
		"INSERT INTO session_model_usage (session_id, first_seen_at, last_seen_at) VALUES ('p', 1, 1)",
		"INSERT INTO compression_locks VALUES ('p', 'h', 1, 2)",
		"INSERT INTO model_switches (session_id, to_model, switched_at) VALUES ('p', 'm', 1)",
		"INSERT INTO imported_sessions VALUES ('p', 'o', 'f', 1, 1)",
	} {
		if _, err := pool.Exec(ctx, setup); err != nil {
			t.Fatalf("%s: %v", setup, err)
		}
	}

	for _, tc := range []struct{ name, sql, sqlstate string }{
		{"duplicate session", "INSERT INTO sessions (id, started_at) VALUES ('p', 1)", "23505"},
		{"session without started_at", "INSERT INTO sessions (id) VALUES ('x')", "23502"},
		{"title_rank above 2", "UPDATE sessions SET title_rank = 3 WHERE id = 'p'", "23514"},
		{"archived not 0/1", "UPDATE sessions SET archived = 2 WHERE id = 'p'", "23514"},
		{"pinned not 0/1", "UPDATE sessions SET pinned = -1 WHERE id = 'p'", "23514"},
		{"hidden not 0/1", "UPDATE sessions SET hidden = 5 WHERE id = 'p'", "23514"},
		{"unknown handoff state", "UPDATE sessions SET handoff_state = 'lost' WHERE id = 'p'", "23514"},
		{"unknown parent kind", "UPDATE sessions SET parent_kind = 'cousin' WHERE id = 'c'", "23514"},
		{"parent that does not exist", "UPDATE sessions SET parent_session_id = 'nope' WHERE id = 'c'", "23503"},
		{"title taken by the user", "UPDATE sessions SET title = 't', user_id = 'u' WHERE id IN ('p', 'c')", "23505"},
		{"message for no session", "INSERT INTO messages (session_id, role, created_at) VALUES ('nope', 'user', 1)", "23503"},
		{"unknown role", "INSERT INTO messages (session_id, role, created_at) VALUES ('p', 'robot', 1)", "23514"},
		{"unknown message state", "INSERT INTO messages (session_id, role, state, created_at) VALUES ('p', 'user', 'gone', 1)", "23514"},
		{"is_summary not 0/1", "INSERT INTO messages (session_id, role, is_summary, created_at) VALUES ('p', 'user', 2, 1)", "23514"},
		{"idempotency key reused", "INSERT INTO messages (session_id, role, idempotency_key, created_at) VALUES ('p', 'user', 'k', 2)", "23505"},
		{"platform message id reused", "INSERT INTO messages (session_id, role, platform_message_id, created_at) VALUES ('p', 'user', 'pm', 2)", "23505"},
		{"usage row twice", "INSERT INTO session_model_usage (session_id, first_seen_at, last_seen_at) VALUES ('p', 1, 1)", "23505"},
		{"second compression lock", "INSERT INTO compression_locks VALUES ('p', 'h2', 1, 2)", "23505"},
		{"lock for no session", "INSERT INTO compression_locks VALUES ('nope', 'h', 1, 2)", "23503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pool.Exec(ctx, tc.sql)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != tc.sqlstate {
				t.Errorf("%s: %v, want SQLSTATE %s", tc.sql, err, tc.sqlstate)
			}
		})
	}

	t.Run("a user and the user-less scope may hold the same title", func(t *testing.T) {
		if _, err := pool.Exec(ctx, "UPDATE sessions SET title = 'same', user_id = NULL WHERE id = 'p'"); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, "UPDATE sessions SET title = 'same', user_id = 'u' WHERE id = 'c'"); err != nil {
			t.Errorf("a user's title equal to a user-less session's: %v", err)
		}
	})

	t.Run("defaults", func(t *testing.T) {
		var source, state string
		var counters, summary int64
		err := pool.QueryRow(ctx, `SELECT s.source, s.message_count + s.tool_call_count + s.input_tokens + s.title_rank + s.archived + s.rewind_count,
			m.state, m.is_summary FROM sessions s JOIN messages m ON m.session_id = s.id WHERE s.id = 'p'`).Scan(&source, &counters, &state, &summary)
		if err != nil {
			t.Fatal(err)
		}
		if source != "unknown" || counters != 0 || state != "active" || summary != 0 {
			t.Errorf("defaults: source %q, counters %d, state %q, is_summary %d", source, counters, state, summary)
		}
	})

	// Deleting a session takes its messages, usage, lock, model switches and
	// import record; its child stays, unlinked.
	t.Run("delete cascades", func(t *testing.T) {
		if _, err := pool.Exec(ctx, "DELETE FROM sessions WHERE id = 'p'"); err != nil {
			t.Fatal(err)
		}
		var left int64
		err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM session_model_usage)
			+ (SELECT count(*) FROM compression_locks) + (SELECT count(*) FROM model_switches)
			+ (SELECT count(*) FROM imported_sessions)`).Scan(&left)
		if err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Errorf("%d dependent rows outlived their session", left)
		}
		var parent *string
		if err := pool.QueryRow(ctx, "SELECT parent_session_id FROM sessions WHERE id = 'c'").Scan(&parent); err != nil {
			t.Fatal(err)
		}
		if parent != nil {
			t.Errorf("child's parent after delete = %q, want NULL", *parent)
		}
	})
}

// The last_message_at trigger updates the store's own sessions even for
// a writer whose search_path names another schema: its function keeps the
// search_path it was created with.
func TestLastMessageTriggerKeepsItsSchema(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t)
	pool := openPool(t, dsn, schema)
	ctx := context.Background()
	if _, err := Prepare(ctx, pool); err != nil {
		t.Fatal(err)
	}
	other := openPool(t, dsn, "public")
	table := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	if _, err := other.Exec(ctx, "INSERT INTO "+table("sessions")+" (id, started_at) VALUES ('s', 1)"); err != nil {
		t.Fatal(err)
	}
	for _, at := range []int64{5, 3} { // only moves forward
		if _, err := other.Exec(ctx, "INSERT INTO "+table("messages")+" (session_id, role, created_at) VALUES ('s', 'user', $1)", at); err != nil {
			t.Fatal(err)
		}
	}
	var last int64
	if err := pool.QueryRow(ctx, "SELECT last_message_at FROM sessions WHERE id = 's'").Scan(&last); err != nil {
		t.Fatal(err)
	}
	if last != 5 {
		t.Errorf("last_message_at = %d, want 5", last)
	}
}

// The migration's Down section is valid SQL and leaves an empty schema.
func TestMigrationDown(t *testing.T) {
	pool := migratedPool(t)
	ctx := context.Background()
	p := migrationProvider(t, pool)
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatal(err)
	}
	schema, _ := SchemaOf(pool.Config())
	if got := storeTables(t, pool, schema); len(got) != 1 || got[0] != "goose_db_version" {
		t.Errorf("tables after down: %v, want only goose_db_version", got)
	}
	var functions int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_proc WHERE pronamespace = $1::regnamespace", schema).Scan(&functions); err != nil {
		t.Fatal(err)
	}
	if functions != 0 {
		t.Errorf("%d functions left after down", functions)
	}
	if n, err := Migrate(ctx, pool); err != nil || n != migrationCount(t) {
		t.Errorf("up again: applied %d, %v; want %d", n, err, migrationCount(t))
	}
}
