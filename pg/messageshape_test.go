package pg

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store"
)

// A store from before the message shape (version 2) whose sessions repeat
// a platform message id migrates with its data intact, by SQLite's rule:
// the first row keeps the id, each later one keeps it in its metadata (in
// the same bytes), and ids in other sessions stay.
func TestMigrate_DuplicatePlatformIDs(t *testing.T) {
	ctx := t.Context()
	schema := freshSchema(t)
	pool := openPool(t, testDSN(t), schema)
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	p := migrationProvider(t, pool)
	if _, err := p.UpTo(ctx, 2); err != nil {
		t.Fatalf("migrate up to 2: %v", err)
	}
	for _, q := range []string{
		"INSERT INTO sessions (id, source, started_at) VALUES ('a', 'test', 1), ('b', 'test', 1)",
		`INSERT INTO messages (session_id, role, content, platform_message_id, reasoning_details, created_at) VALUES
			('a', 'user', 'first', 'tg-1', NULL, 2), ('a', 'user', 'again', 'tg-1', '{"k": 1}', 3),
			('a', 'user', 'other', 'tg-<2>', NULL, 4), ('a', 'user', 'third', 'tg-1', NULL, 5),
			('a', 'user', 'none', NULL, NULL, 6), ('b', 'user', 'elsewhere', 'tg-1', NULL, 7)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s, err := OpenPool(ctx, pool, Options{})
	if err != nil {
		t.Fatalf("open a version-2 store with duplicate platform ids: %v", err)
	}
	defer s.Close()
	type row struct{ Session, Content, PlatformID, Metadata, Details string }
	var got []row
	for _, id := range []string{"a", "b"} {
		ms, err := s.Messages(ctx, id, store.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			got = append(got, row{m.SessionID, m.Content, m.PlatformMessageID, m.Metadata, m.ReasoningDetails})
		}
	}
	dup := `{"duplicate_platform_message_id":"tg-1"}`
	want := []row{
		{"a", "first", "tg-1", "", ""}, {"a", "again", "", dup, `{"k": 1}`}, {"a", "other", "tg-<2>", "", ""},
		{"a", "third", "", dup, ""}, {"a", "none", "", "", ""}, {"b", "elsewhere", "tg-1", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the migration (-want +got):\n%s", diff)
	}
}
