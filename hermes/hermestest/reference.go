package hermestest

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/hermes"
	. "github.com/sessiondb/sessiondb/store"
)

// schemaV30 is the part of a recent Hermes schema (v30) the reference
// fields need: messages with observed, effect_disposition and
// reasoning_content; sessions with the compression fallback streak.
var schemaV30 = []string{
	`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
	`INSERT INTO schema_version VALUES (30)`,
	`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
		model_config TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
		message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
		compression_fallback_streak INTEGER NOT NULL DEFAULT 0)`,
	`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
		role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
		timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT, reasoning_content TEXT,
		effect_disposition TEXT, observed INTEGER DEFAULT 0, active INTEGER NOT NULL DEFAULT 1,
		compacted INTEGER NOT NULL DEFAULT 0)`,
}

var referenceRows = []string{
	`INSERT INTO sessions (id, source, started_at, compression_fallback_streak) VALUES ('r', 'cli', 1700000000.0, 2)`,
	// A delegate whose parent is gone, still marked.
	`INSERT INTO sessions (id, source, model_config, started_at) VALUES ('dlg', 'cli', '{"_delegate_from": "vanished"}', 1700000050.0)`,
	`INSERT INTO messages (session_id, role, content, timestamp, observed) VALUES ('r', 'user', 'a line in the group', 1700000001.0, 1)`,
	`INSERT INTO messages (session_id, role, content, tool_calls, timestamp, reasoning, reasoning_content)
		VALUES ('r', 'assistant', '', '[{"id": "c1", "type": "function", "function": {"name": "rm", "arguments": "{}"}}]',
		1700000002.0, 'short', 'the provider''s long reasoning')`,
	`INSERT INTO messages (session_id, role, content, tool_call_id, tool_name, timestamp, effect_disposition)
		VALUES ('r', 'tool', 'removed', 'c1', 'rm', 1700000003.0, 'applied')`,
	`INSERT INTO messages (session_id, role, content, timestamp, effect_disposition) VALUES ('r', 'user', 'ok', 1700000004.0, 'applied')`,
	`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('dlg', 'user', 'sub-task', 1700000051.0)`,
}

// testReferenceFields: the reference's message fields (the observed mark,
// a tool result's effect disposition, reasoning_content apart from
// reasoning), the compression fallback streak and a parentless delegate's
// mark are imported, not counted as lost; an effect disposition on a row
// that is not a tool result is counted.
func testReferenceFields(t *testing.T, e Engine) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	writeLegacy(t, path, false, append(slices.Clone(schemaV30), referenceRows...)...)
	s := e.Open(t)
	res, err := hermes.Import(ctx, s, path, hermes.Options{})
	if err != nil || res.Imported != 2 || res.Messages != 5 {
		t.Fatalf("import = %+v, %v; want 2 sessions, 5 messages", res, err)
	}
	if diff := cmp.Diff(map[string]int64{"messages.effect_disposition(not on a tool result, or invalid)": 1}, res.NotRepresentable); diff != "" {
		t.Errorf("not representable (-want +got):\n%s", diff)
	}
	ms, err := s.Messages(ctx, "r", MessageQuery{})
	if err != nil || len(ms) != 4 {
		t.Fatalf("messages of r = %d, %v", len(ms), err)
	}
	type fields struct {
		Observed                            bool
		Reasoning, ReasoningContent, Effect string
	}
	var got []fields
	for _, m := range ms {
		got = append(got, fields{m.Observed, m.Reasoning, m.ReasoningContent, m.EffectDisposition})
	}
	want := []fields{{Observed: true}, {Reasoning: "short", ReasoningContent: "the provider's long reasoning"},
		{Effect: "applied"}, {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if r, err := s.Session(ctx, "r"); err != nil || r.CompressionFallbackStreak != 2 {
		t.Errorf("r's fallback streak = %d, %v; want 2", r.CompressionFallbackStreak, err)
	}
	dlg, err := s.Session(ctx, "dlg")
	if err != nil || dlg.ParentID != "" || dlg.DelegatedFrom != "vanished" {
		t.Errorf("dlg = parent %q delegated from %q, %v; want no parent, from vanished", dlg.ParentID, dlg.DelegatedFrom, err)
	}
	page, err := s.RecentSessions(ctx, RecentQuery{})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "r" {
		t.Errorf("listed = %+v, %v; want r alone (the delegate hidden)", page.Sessions, err)
	}
}
