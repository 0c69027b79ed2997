package pg

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// A store from before tool calls were searchable (version 2) is carried
// forward: every row gets the tool text the domain gives a new row (the
// migration's SQL and searchtext.ToolText agree), and both indexes find
// the calls. Hand-written SQL: the rows are planted below the store's API.
func TestMigrate_ToolCallsOfAnOlderStore(t *testing.T) {
	pool := migratedPool(t)
	ctx := context.Background()
	p := migrationProvider(t, pool)
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	calls := []string{
		`[{"id":"c1","name":"list_dir","arguments":"{\"path\":\"/srv/walrus\"}"},{"id":"c2","name":"read_file","arguments":"{\"path\":\"日本語の検索.txt\"}"}]`,
		`[{"id":"c3","name":"noop","arguments":""}]`,
		`[{"id":"c4","arguments":null}]`,
		`[{"id":"c5","name":"jot","arguments":"left\u0000narwhal"}]`,
		`[]`,
	}
	if _, err := pool.Exec(ctx, "INSERT INTO sessions (id, source, started_at) VALUES ('a', 'cli', 1)"); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if _, err := pool.Exec(ctx, "INSERT INTO messages (session_id, role, content, tool_calls_json, created_at) VALUES ('a', 'assistant', '', $1, 1)", c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, "SELECT tool_calls_json, tool_text FROM messages ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var c string
		var text *string
		if err := rows.Scan(&c, &text); err != nil {
			t.Fatal(err)
		}
		if want := searchtext.ToolText(c); !cmp.Equal(want, text) {
			t.Errorf("%s: tool text %v, the domain's %v", c, deref(text), deref(want))
		}
		n++
	}
	if err := rows.Err(); err != nil || n != len(calls) {
		t.Fatalf("%d rows, %v", n, err)
	}
	for q, want := range map[string]int{"walrus": 1, "read_file": 1, "noop": 1} {
		var got int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM messages WHERE sessiondb_words(content, tool_name, tool_text) @@ sessiondb_match($1)", q).Scan(&got); err != nil || got != want {
			t.Errorf("words %q: %d, %v; want %d", q, got, err, want)
		}
	}
	var got int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM messages WHERE tool_text ILIKE '%の検索%'").Scan(&got); err != nil || got != 1 {
		t.Errorf("substring in the tool text: %d, %v; want 1", got, err)
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
