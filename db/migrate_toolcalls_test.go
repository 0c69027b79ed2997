package db

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/internal/searchtext"
	"github.com/sessiondb/sessiondb/storetest"

	"github.com/google/go-cmp/cmp"
)

// A file from before tool calls were searchable (version 8) is carried
// forward: every row gets the tool text the domain gives a new row (the
// migration's SQL and searchtext.ToolText agree), the indexes are rebuilt
// with it — the rows an older build left queued included — and Verify
// finds them exact.
func TestOpen_IndexesToolCallsOfAnOlderFile(t *testing.T) {
	path := t.TempDir() + "/state.db"
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustCreate(t, s.Store, NewSession{ID: "a"})
	if _, err := s.AppendMessages(t.Context(), "a", []NewMessage{
		{Role: RoleUser, Content: "list the files"},
		{Role: RoleAssistant, Content: "", ToolCalls: []ToolCall{
			{ID: "c1", Name: "list_dir", Arguments: `{"path":"/srv/walrus"}`},
			{ID: "c2", Name: "read_file", Arguments: "{\"path\":\"日本語/検索.txt\",\"note\":\"line\\nbreak \\u00e9\"}"},
		}},
		{Role: RoleTool, ToolName: "list_dir", ToolCallID: "c1", Content: "a.txt b.txt"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c3", Name: "noop"}}},
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	migrateDownTo(t, path, 8)
	// Rows an older build (or another program) wrote, still queued for the
	// index: tool calls as SQL writers may leave them.
	var foreign []string
	for _, calls := range []string{
		`[{"id":"f1","name":"fetch_url","arguments":"{\"url\":\"https://example.org/okapi\"}"}]`,
		`[{"id":"f2","arguments":{"query": "narwhal tusk"}}]`, // no name, arguments an object
		`[{"id":"f3","name":"shell","arguments":null},{"id":"f4","name":"shell","arguments":"ls"}]`,
		`[{"id":"f5","name":"jot","arguments":"left\u0000ibex"}]`, // a NUL: a space in the text
		`[]`,
		`not json`,
	} {
		foreign = append(foreign, "INSERT INTO messages (session_id, role, content, tool_calls_json, created_at) VALUES ('a', 'assistant', '', '"+
			strings.ReplaceAll(calls, "'", "''")+"', 0)")
	}
	damage(t, path, foreign...)

	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := queued(t, s); n != 0 {
		t.Errorf("%d rows queued after the migration, want 0 (the rebuild indexed them)", n)
	}
	rows, err := s.readers.QueryContext(t.Context(), "SELECT id, tool_calls_json, tool_text FROM messages ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	withText := 0
	for rows.Next() {
		var id int64
		var calls, text *string
		if err := rows.Scan(&id, &calls, &text); err != nil {
			t.Fatal(err)
		}
		var want *string
		if calls != nil {
			want = searchtext.ToolText(*calls)
		}
		// SQLite's replace() cannot match a NUL, so a NUL stored before
		// version 10 stays one in the migrated text (where ToolText writes
		// a space); to both indexes it separates words all the same.
		if text != nil {
			*text = strings.ReplaceAll(*text, "\x00", " ")
		}
		if !cmp.Equal(want, text) {
			t.Errorf("message %d (%s): tool text %q, the domain's %q", id, rules.Str(calls), rules.Str(text), rules.Str(want))
		}
		if text != nil {
			withText++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if withText != 6 {
		t.Errorf("%d rows have a tool text, want 6", withText)
	}
	ftsConsistent(t, s)
	for q, want := range map[string]int{
		"walrus": 1, "read_file": 1, "検索": 1, "日本語": 1, "okapi": 1, "fetch_url": 1, "narwhal": 1, `"narwhal tusk"`: 1,
		"shell": 1, "noop": 1, "list_dir": 2, "ibex": 1,
	} {
		if got := len(searchContents(t, s, q)); got != want {
			t.Errorf("Search(%q) after the migration: %d hits, want %d", q, got, want)
		}
	}
	// The migration indexed what it could and changed no cell: the one
	// call list that is not JSON is still there, and Verify names it
	// (celltypes.go) as the only finding.
	if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthCorrupt || len(r.Details) != 1 ||
		!strings.Contains(r.Details[0], "messages.tool_calls_json holds JSON that does not parse, in 1 row(s)") {
		t.Errorf("Verify after the migration: %s %v %v; want only the planted call list that is not JSON", r.Health, r.Details, err)
	}
}

// The Down step gives an older build the file it knew: no tool text, the
// indexes over content and tool name, exact.
func TestMigrate_ToolCallsDown(t *testing.T) {
	path := t.TempDir() + "/state.db"
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustCreate(t, s.Store, NewSession{ID: "a"})
	if _, err := s.AppendMessages(t.Context(), "a", []NewMessage{
		{Role: RoleAssistant, Content: "calling", ToolCalls: []ToolCall{{ID: "c1", Name: "list_dir", Arguments: `{"path":"/srv/walrus"}`}}},
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	migrateDownTo(t, path, 8)
	if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
		t.Errorf("Verify of the version-8 file: %s %v %v", r.Health, r.Details, err)
	}
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var n int
	if err := d.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM pragma_table_info('messages') WHERE name = 'tool_text'").Scan(&n); err != nil || n != 0 {
		t.Errorf("tool_text columns after Down: %d, %v", n, err)
	}
	if err := d.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM messages_fts('calling')").Scan(&n); err != nil || n != 1 {
		t.Errorf("the word index after Down finds %d, %v; want 1", n, err)
	}
}

// Open's patience bounds waiting for other processes, not the migrations:
// one cut off would roll back, and be cut off again at every Open.
func TestMigrate_RunsPastItsContextsDeadline(t *testing.T) {
	path := t.TempDir() + "/state.db"
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustCreate(t, s.Store, NewSession{ID: "a"})
	storetest.AppendTexts(t, s.Store, "a", "carried forward")
	s.Close()
	migrateDownTo(t, path, 8)
	d, err := openDB(path, kindWriter, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	if _, _, err := migrate(ctx, d); err != nil {
		t.Fatalf("migrate with its deadline past: %v", err)
	}
	var v int64
	if err := d.QueryRowContext(t.Context(), schemaVersionSQL).Scan(&v); err != nil || v != latestMigration() {
		t.Errorf("schema version %d, %v; want %d", v, err, latestMigration())
	}
}
