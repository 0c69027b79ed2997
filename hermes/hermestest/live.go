package hermestest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/hermes"
	. "github.com/sessiondb/sessiondb/store"
)

// TestImportHermesLiveWAL: a Hermes process goes on writing after the first
// import and keeps its writes in the WAL; the next import reads them from
// the WAL, brings only what is new, and leaves the file and its WAL exactly
// as they were (no checkpoint).
func testImportHermesLiveWAL(t *testing.T, e Engine) {
	ctx := t.Context()
	path := e.copyFixture(t)
	s := e.Open(t)
	first, err := hermes.Import(ctx, s, path, hermes.Options{})
	if err != nil || first.Imported != 7 {
		t.Fatalf("first import = %+v, %v", first, err)
	}

	src := openHermesWriter(t, path)
	execAll(t, src,
		// A new turn in a live session, and its end.
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('cli-20261102-b1', 'assistant', 'Stage 3 spends 80% in gzip.', 1796114500.5)`,
		`UPDATE sessions SET ended_at = 1796114501.25, end_reason = 'user_exit', message_count = message_count + 1 WHERE id = 'cli-20261102-b1'`,
		// A second rewind in the Discord chat.
		`UPDATE messages SET active = 0 WHERE id IN (17, 18)`,
		`UPDATE sessions SET rewind_count = 2 WHERE id = 'dc-42-1'`,
		// A new session, with a row sessiondb cannot hold and a field it does not model.
		`INSERT INTO sessions (id, source, started_at, user_id) VALUES ('cli-new-1', 'cli', 1796114600.0, 'ana')`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('cli-new-1', 'user', 'hello again', 1796114600.1)`,
		`INSERT INTO messages (session_id, role, content, timestamp, codex_reasoning_items) VALUES ('cli-new-1', 'assistant', 'hi', 1796114600.2, '[{"id":"r1"}]')`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('cli-new-1', 'session_meta', '{}', 1796114600.3)`,
		`INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at) VALUES ('', 'k', '{}', 1796114600.0)`,
	)
	srcFiles := []string{path, path + "-wal"}
	before := fileHashes(t, srcFiles...)
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the Hermes writes should sit in the WAL: %v, %v", fi, err)
	}

	var progressed []int64
	res, err := hermes.Import(ctx, s, path, hermes.Options{OnProgress: func(done, total int64) { progressed = append(progressed, done, total) }})
	if err != nil {
		t.Fatalf("second import: %v", err)
	}
	want := hermes.Result{Imported: 1, Updated: 2, Unchanged: 5, Messages: 3, Restated: 2,
		NotRepresentable: map[string]int64{"messages.codex_reasoning_items": 1, "table gateway_routing": 1},
		RefusedMessages:  map[string]int64{`role "session_meta"`: 1}, Source: path}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("import after Hermes wrote more (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, fileHashes(t, srcFiles...)); diff != "" {
		t.Errorf("the import changed the source or its WAL (-before +after):\n%s", diff)
	}
	if n := len(progressed); n < 2 || progressed[n-2] != progressed[n-1] || progressed[n-1] != 33 {
		t.Errorf("progress ended at %v, want 33 of 33", progressed[max(0, n-2):])
	}

	b1, err := s.Session(ctx, "cli-20261102-b1")
	if err != nil {
		t.Fatal(err)
	}
	if b1.EndReason != "user_exit" || b1.EndedAt.UnixMilli() != 1796114501250 || b1.MessageCount != 4 {
		t.Errorf("b1 = ended %v %q, %d messages; want the end and 4 active rows", b1.EndedAt, b1.EndReason, b1.MessageCount)
	}
	conv, err := s.Conversation(ctx, "dc-42-1", ConversationOptions{})
	if err != nil || len(conv) != 2 {
		t.Errorf("dc-42-1 after the second rewind: %d active rows, %v; want 2", len(conv), err)
	}
	if dc, _ := s.Session(ctx, "dc-42-1"); dc.RewindCount != 2 {
		t.Errorf("dc-42-1 rewind count = %d, want 2", dc.RewindCount)
	}

	third, err := hermes.Import(ctx, s, path, hermes.Options{})
	if err != nil || !third.NothingNew() || third.Unchanged != 8 {
		t.Errorf("third import = %+v, %v; want nothing new, 8 unchanged", third, err)
	}
}

// TestImportHermesSkipsForeignIDs: a session id the store already uses for
// one of its own sessions is left alone, and a Hermes child of it is not
// linked under the stranger.
func testImportHermesSkipsForeignIDs(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t)
	if _, err := s.CreateSession(ctx, NewSession{ID: "cli-20261101-a2", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	res, err := hermes.Import(ctx, s, filepath.Join(e.fixtureInPlace(t), "state.db"), hermes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 6 || res.Skipped != 1 || res.Detached != 1 {
		t.Errorf("import = %+v, want 6 imported, 1 skipped, 1 detached", res)
	}
	own, _ := s.Session(ctx, "cli-20261101-a2")
	if own.Source != "test" || own.MessageCount != 0 {
		t.Errorf("the store's own session was changed: %+v", own)
	}
	sub, _ := s.Session(ctx, "cli-20261101-a1-sub1")
	if sub.ParentID != "" {
		t.Errorf("sub-agent linked under the store's own session %q", sub.ParentID)
	}
}

func testImportHermesRefusesOtherFiles(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t)
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	os.WriteFile(notDB, []byte("this is not a database, just some text long enough to be read"), 0o600)
	tests := []struct {
		name, path string
		want       error
	}{
		{"Missing", filepath.Join(dir, "absent.db"), ErrNotFound},
		{"Directory", dir, ErrInvalidInput},
		{"NotSQLite", notDB, ErrNotDatabase},
		{"SessiondbFile", sessiondbFile(t), ErrInvalidInput}, // sqlite, but not Hermes's schema
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := hermes.Import(ctx, s, tt.path, hermes.Options{})
			if !errors.Is(err, tt.want) {
				t.Errorf("ImportHermes(%s) = %v, want %v", tt.path, err, tt.want)
			}
		})
	}
}

// TestImportHermesResumes: an import stopped part-way (here after its
// first batches) has committed whole batches; running it again finishes
// the job, and the store ends exactly as after one uninterrupted import.
func testImportHermesResumes(t *testing.T, e Engine) {
	ctx := t.Context()
	src := filepath.Join(e.fixtureInPlace(t), "state.db")
	s := e.Open(t)
	stopped, cancel := context.WithCancel(ctx)
	_, err := hermes.Import(stopped, s, src, hermes.Options{BatchMessages: 2, OnProgress: func(done, _ int64) {
		if done >= 6 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped import = %v, want context.Canceled", err)
	}
	res, err := hermes.Import(ctx, s, src, hermes.Options{BatchMessages: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported+res.Updated+res.Unchanged != 7 || res.Imported == 7 || res.Messages >= 29 {
		t.Errorf("resumed import = %+v: want the rest of the 7 sessions and 29 messages", res)
	}
	clean := e.Open(t)
	if _, err := hermes.Import(ctx, clean, src, hermes.Options{}); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if _, err := s.Export(ctx, &a, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := clean.Export(ctx, &b, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(b.String(), a.String()); diff != "" {
		t.Errorf("resumed store differs from a clean import (-clean +resumed):\n%s", diff)
	}
}

// The Hermes import applies the migration's rule to the rows it brings:
// a platform id an earlier row of the session holds moves into metadata.
func testImportHermes_DuplicatePlatformIDs(t *testing.T, e Engine) {
	ctx := t.Context()
	path := e.copyFixture(t)
	src := openHermesWriter(t, path)
	execAll(t, src,
		`UPDATE messages SET platform_message_id = '5001' WHERE id = 11`,
		`INSERT INTO messages (session_id, role, content, timestamp, platform_message_id) VALUES ('tg-778899-1', 'user', 'later', 1796114500.5, '5001')`)
	s := e.Open(t)
	if res, err := hermes.Import(ctx, s, path, hermes.Options{}); err != nil || res.Imported != 7 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	ms, err := s.Messages(ctx, "tg-778899-1", MessageQuery{IncludeRewound: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, m := range ms {
		got[m.IdempotencyKey] = [2]string{m.PlatformMessageID, m.Metadata}
	}
	dup := [2]string{"", `{"duplicate_platform_message_id":"5001"}`}
	for key, want := range map[string][2]string{"hermes:10": {"5001", ""}, "hermes:11": dup, "hermes:12": {"5003", ""}} {
		if got[key] != want {
			t.Errorf("%s: platform id and metadata %q, want %q", key, got[key], want)
		}
	}
	var later int
	for k, v := range got {
		if v == dup && k != "hermes:11" {
			later++
		}
	}
	if later != 1 {
		t.Errorf("%d other rows keep 5001 in their metadata, want the one added later (%v)", later, got)
	}
	// A second import brings nothing new and changes nothing.
	if res, err := hermes.Import(ctx, s, path, hermes.Options{}); err != nil || res.Messages != 0 {
		t.Errorf("second import = %+v, %v", res, err)
	}
}
