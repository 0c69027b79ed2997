package pg

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store"
)

// Migration 13 stores the word vector: a store from before it keeps every
// message, each gains its vector (found by Search through the new index),
// and its statistics are gathered at once; an empty store's are not
// (statistics of an empty table planned the append's counter UPDATE to
// read every message — see the migration). Down gives the expression index
// back. Hand-written SQL: the rows are planted below the store's API.
func TestMigrate_StoredWordsOfAnOlderStore(t *testing.T) {
	pool := migratedPool(t)
	ctx := context.Background()
	reltuples := func() float64 {
		t.Helper()
		var n float64
		if err := pool.QueryRow(ctx, "SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass",
			pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := reltuples(); n >= 0 {
		t.Errorf("an empty store's messages were analyzed by its migration (reltuples %v); want never (-1)", n)
	}

	p := migrationProvider(t, pool)
	if _, err := p.DownTo(ctx, 12); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO sessions (id, source, started_at) VALUES ('w', 'cli', 1000)",
		`INSERT INTO messages (session_id, role, content, tool_name, tool_text, created_at)
			VALUES ('w', 'user', 'the café is open', NULL, NULL, 1001),
			       ('w', 'assistant', 'calling a tool', 'web_search', E'web_search\n{"q":"zebra crossing"}', 1002)`,
	} {
		if _, err := pool.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	var missing int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM messages WHERE words IS NULL OR words <> sessiondb_words(content, tool_name, tool_text)",
		pgx.QueryExecModeSimpleProtocol).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if missing != 0 {
		t.Errorf("%d messages without their stored vector after the migration", missing)
	}
	if n := reltuples(); n != 2 {
		t.Errorf("reltuples after migrating a store of 2 messages = %v, want 2 (analyzed by the migration)", n)
	}

	s, err := OpenPool(ctx, pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		term string
		want []string
	}{
		{"cafe", []string{"user"}},                // the café is open
		{"zebra crossing", []string{"assistant"}}, // in its tool call
	} {
		hits, err := s.Search(ctx, tc.term, store.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, string(h.Role))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Search(%q) after the migration (-want +got):\n%s", tc.term, diff)
		}
	}
	s.Close()

	if _, err := p.DownTo(ctx, 12); err != nil {
		t.Fatal(err)
	}
	var def string
	if err := pool.QueryRow(ctx, "SELECT pg_get_indexdef('messages_words'::regclass)", pgx.QueryExecModeSimpleProtocol).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if want := "USING gin (sessiondb_words(content, tool_name, tool_text))"; !strings.Contains(def, want) {
		t.Errorf("messages_words after Down = %q, want the expression index (%q)", def, want)
	}
}
