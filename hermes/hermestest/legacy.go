package hermestest

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/hermes"
	. "github.com/sessiondb/sessiondb/store"
)

// Legacy Hermes schemas, as the reference store wrote them before the
// columns of later versions: v2, its first sessions and messages with
// lineage and token counts; v7, with titles, cache and reasoning tokens,
// billing and cost, and messages with reasoning — still without
// messages.active (v8), so every row is live.
var (
	schemaV2 = []string{
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version VALUES (2)`,
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
			model_config TEXT, system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL,
			ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
			input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
			role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
			timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT)`,
	}
	schemaV7 = []string{
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version VALUES (7)`,
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
			model_config TEXT, system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL,
			ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
			input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
			cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT,
			billing_base_url TEXT, billing_mode TEXT, estimated_cost_usd REAL, actual_cost_usd REAL,
			cost_status TEXT, cost_source TEXT, pricing_version TEXT, title TEXT)`,
		`CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
			role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
			timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
			reasoning_details TEXT, codex_reasoning_items TEXT)`,
	}
	// schemaV1Unreadable has a schema version and Hermes's tables but no
	// messages.timestamp: an import needs it and refuses the file.
	schemaV1Unreadable = []string{
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version VALUES (1)`,
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, started_at REAL NOT NULL)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT)`,
	}
)

// rows of the legacy files: a root ended by compression and its
// continuation (v2 and v7 alike), with a tool call.
var legacyRows = []string{
	`INSERT INTO sessions (id, source, user_id, model, started_at, ended_at, end_reason, input_tokens, output_tokens)
		VALUES ('old-root', 'cli', 'ana', 'gpt-4o', 1700000000.0, 1700000100.5, 'compression', 120, 30)`,
	`INSERT INTO sessions (id, source, user_id, model, parent_session_id, started_at)
		VALUES ('old-child', 'cli', 'ana', 'gpt-4o', 'old-root', 1700000101.0)`,
	`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old-root', 'user', 'list the files', 1700000001.0)`,
	`INSERT INTO messages (session_id, role, content, tool_calls, timestamp, finish_reason)
		VALUES ('old-root', 'assistant', '', '[{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]', 1700000002.0, 'tool_calls')`,
	`INSERT INTO messages (session_id, role, content, tool_call_id, tool_name, timestamp)
		VALUES ('old-root', 'tool', 'a.txt b.txt', 'c1', 'ls', 1700000003.0)`,
	`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old-child', 'user', 'and now?', 1700000102.0)`,
}

// writeLegacy builds a Hermes file of an older schema at path, in
// rollback-journal mode (as those versions wrote it) unless wal.
func writeLegacy(t *testing.T, path string, wal bool, stmts ...string) {
	t.Helper()
	registerSQLite(t, sessiondbFile(t))
	dsn := "file:" + path
	if wal {
		dsn += "?_pragma=journal_mode(wal)"
	}
	//sessiondb:allow rawopen -- writes a foreign (legacy Hermes) file for the import tests
	d, err := sql.Open("sqlite3", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, q := range stmts {
		if _, err := d.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// dirListing names the files in dir with their hashes: an import must
// leave the source's directory as it found it (no -wal, -shm or journal
// created, nothing changed).
func dirListing(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range ents {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	return fileHashes(t, paths...)
}

// testLegacyVersions: a v2 file and a v7 file (no messages.active) import
// whole — every row live, lineage and tool calls kept, what each version
// has mapped — and a second import finds nothing new (issue 34, item 4).
func testLegacyVersions(t *testing.T, e Engine) {
	for _, v := range []struct {
		name   string
		schema []string
		extra  []string
		check  func(t *testing.T, s *Store)
	}{
		{"v2", schemaV2, nil, func(t *testing.T, s *Store) {}},
		{"v7", schemaV7, []string{
			`UPDATE sessions SET title = 'Files', billing_provider = 'openai', estimated_cost_usd = 0.25,
				cache_read_tokens = 7 WHERE id = 'old-root'`,
			`UPDATE messages SET reasoning = 'ls shows them' WHERE tool_calls IS NOT NULL`,
			// A model config is a JSON object or nothing: JSON of another
			// shape is counted as lost, not imported for SetModel to trip on.
			`UPDATE sessions SET model_config = CASE id WHEN 'old-root' THEN '{"temperature": 1}' ELSE '[1]' END`,
		}, func(t *testing.T, s *Store) {
			root, err := s.Session(t.Context(), "old-root")
			if err != nil {
				t.Fatal(err)
			}
			if root.Title != "Files" || root.Billing.Provider != "openai" || root.Usage.EstimatedCostUSD != 0.25 || root.Usage.CacheReadTokens != 7 {
				t.Errorf("v7 root = title %q, billing %+v, usage %+v", root.Title, root.Billing, root.Usage)
			}
			child, err := s.Session(t.Context(), "old-child")
			if err != nil || root.ModelConfig != `{"temperature": 1}` || child.ModelConfig != "" {
				t.Errorf("v7 model configs: root %q, child %q (%v); want the object kept and the array left out", root.ModelConfig, child.ModelConfig, err)
			}
			ms, _ := s.Conversation(t.Context(), "old-root", ConversationOptions{})
			if len(ms) < 2 || ms[1].Reasoning != "ls shows them" {
				t.Errorf("v7 reasoning not kept: %+v", ms)
			}
		}},
	} {
		t.Run(v.name, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			writeLegacy(t, path, false, append(append(slices.Clone(v.schema), legacyRows...), v.extra...)...)
			before := dirListing(t, dir)
			s := e.Open(t)
			res, err := hermes.Import(ctx, s, path, hermes.Options{})
			if err != nil {
				t.Fatalf("import %s file: %v", v.name, err)
			}
			if res.Imported != 2 || res.Messages != 4 || res.Refused != 0 || len(res.RefusedMessages) != 0 {
				t.Errorf("import %s = %+v; want 2 sessions, 4 messages", v.name, res)
			}
			if diff := cmp.Diff(before, dirListing(t, dir)); diff != "" {
				t.Errorf("the import changed the source's directory (-before +after):\n%s", diff)
			}
			child, err := s.Session(ctx, "old-child")
			if err != nil || child.ParentID != "old-root" || child.Kind != ChildCompression {
				t.Errorf("old-child = %+v, %v; want a compression continuation of old-root", child, err)
			}
			ms, err := s.Conversation(ctx, "old-root", ConversationOptions{})
			if err != nil || len(ms) != 3 || len(ms[1].ToolCalls) != 1 || ms[1].ToolCalls[0].Name != "ls" || ms[2].ToolName != "ls" {
				t.Errorf("old-root's conversation = %+v, %v; want 3 live rows with the tool call", ms, err)
			}
			if root, _ := s.Session(ctx, "old-root"); root.MessageCount != 3 || root.Usage.InputTokens != 120 || root.EndReason != "compression" {
				t.Errorf("old-root = %+v", root)
			}
			v.check(t, s)
			again, err := hermes.Import(ctx, s, path, hermes.Options{})
			if err != nil || !again.NothingNew() || again.Unchanged != 2 {
				t.Errorf("second import = %+v, %v; want nothing new", again, err)
			}
		})
	}
}

// testUnsupportedVersion: a Hermes file of a version without a column
// every import needs is refused with an error naming the version, and
// nothing is written.
func testUnsupportedVersion(t *testing.T, e Engine) {
	path := filepath.Join(t.TempDir(), "state.db")
	writeLegacy(t, path, false, append(slices.Clone(schemaV1Unreadable),
		`INSERT INTO sessions VALUES ('s', 'cli', 1700000000.0)`)...)
	s := e.Open(t)
	_, err := hermes.Import(t.Context(), s, path, hermes.Options{})
	var uv *hermes.UnsupportedVersionError
	if !errors.As(err, &uv) || uv.Version != 1 || uv.Missing != "messages.timestamp" || !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("import of a v1 file = %v; want an *UnsupportedVersionError for version 1 matching ErrInvalidInput", err)
	}
	if _, err := s.Session(t.Context(), "s"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a refused import wrote session s: %v", err)
	}
}

// testLeavesTheFileAlone: a WAL-mode Hermes file closed cleanly (no -wal
// beside it) is read without a -shm or -wal appearing beside it, and not
// a byte of it changes.
func testLeavesTheFileAlone(t *testing.T, e Engine) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	writeLegacy(t, path, true, append(slices.Clone(schemaV7), legacyRows...)...)
	for _, side := range []string{"-wal", "-journal"} {
		if _, err := os.Stat(path + side); err == nil {
			t.Fatalf("%s left beside the closed file: the test needs a cleanly closed one", side)
		}
	}
	before := dirListing(t, dir)
	s := e.Open(t)
	if res, err := hermes.Import(t.Context(), s, path, hermes.Options{}); err != nil || res.Imported != 2 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	if diff := cmp.Diff(before, dirListing(t, dir)); diff != "" {
		t.Errorf("the import changed the source's directory (-before +after):\n%s", diff)
	}
}

// testOwnParent: a Hermes session naming itself as its parent is imported
// without a parent link; the rest of the file with it.
func testOwnParent(t *testing.T, e Engine) {
	path := filepath.Join(t.TempDir(), "state.db")
	writeLegacy(t, path, false, append(append(slices.Clone(schemaV2), legacyRows...),
		`INSERT INTO sessions (id, source, parent_session_id, started_at) VALUES ('loop', 'cli', 'loop', 1700000200.0)`)...)
	s := e.Open(t)
	res, err := hermes.Import(t.Context(), s, path, hermes.Options{})
	if err != nil || res.Imported != 3 {
		t.Fatalf("import = %+v, %v; want 3 sessions", res, err)
	}
	if loop, err := s.Session(t.Context(), "loop"); err != nil || loop.ParentID != "" {
		t.Errorf("loop = %+v, %v; want no parent", loop, err)
	}
}
