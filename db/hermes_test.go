package db

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// copyHermesFixture copies the fixture (with its -wal and -shm) into a
// temporary directory, to be written by a test playing the Hermes process.
func copyHermesFixture(t *testing.T) string {
	t.Helper()
	dir := hermesFixtureDir(t)
	dst := t.TempDir()
	for _, n := range []string{"state.db", "state.db-wal", "state.db-shm"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dst, "state.db")
}

// openHermesWriter plays a live Hermes process on path: a plain read-write
// connection that never checkpoints, so what it writes stays in the WAL.
// It stays open until the test ends.
func openHermesWriter(t *testing.T, path string) *sql.Conn {
	t.Helper()
	registerExtensions()
	//sessiondb:allow rawopen -- plays the Hermes process that owns the file being imported
	d, err := sql.Open("sqlite3", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); d.Close() })
	if _, err := c.ExecContext(context.Background(), "PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	return c
}

func execAll(t *testing.T, c *sql.Conn, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestImportHermesLiveWAL: a Hermes process goes on writing after the first
// import and keeps its writes in the WAL; the next import reads them from
// the WAL, brings only what is new, and leaves the file and its WAL exactly
// as they were (no checkpoint).
func TestImportHermesLiveWAL(t *testing.T) {
	ctx := t.Context()
	path := copyHermesFixture(t)
	s := openTestStore(t, Options{})
	first, err := s.ImportHermes(ctx, path, HermesImportOptions{})
	if err != nil || first.Imported != 7 {
		t.Fatalf("first import = %+v, %v", first, err)
	}

	hermes := openHermesWriter(t, path)
	execAll(t, hermes,
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
	res, err := s.ImportHermes(ctx, path, HermesImportOptions{OnProgress: func(done, total int64) { progressed = append(progressed, done, total) }})
	if err != nil {
		t.Fatalf("second import: %v", err)
	}
	want := HermesImportResult{Imported: 1, Updated: 2, Unchanged: 5, Messages: 3, Restated: 2,
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

	third, err := s.ImportHermes(ctx, path, HermesImportOptions{})
	if err != nil || !third.NothingNew() || third.Unchanged != 8 {
		t.Errorf("third import = %+v, %v; want nothing new, 8 unchanged", third, err)
	}
}

// TestImportHermesSkipsForeignIDs: a session id the store already uses for
// one of its own sessions is left alone, and a Hermes child of it is not
// linked under the stranger.
func TestImportHermesSkipsForeignIDs(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	newTestSession(t, s, "cli-20261101-a2")
	res, err := s.ImportHermes(ctx, filepath.Join(hermesFixtureDir(t), "state.db"), HermesImportOptions{})
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

func TestImportHermesRefusesOtherFiles(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
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
		{"SessiondbFile", s.Path(), ErrInvalidInput}, // sqlite, but not Hermes's schema
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.ImportHermes(ctx, tt.path, HermesImportOptions{})
			if !errors.Is(err, tt.want) {
				t.Errorf("ImportHermes(%s) = %v, want %v", tt.path, err, tt.want)
			}
		})
	}
}

// TestImportHermesResumes: an import stopped part-way (here after its
// first batches) has committed whole batches; running it again finishes
// the job, and the store ends exactly as after one uninterrupted import.
func TestImportHermesResumes(t *testing.T) {
	ctx := t.Context()
	src := filepath.Join(hermesFixtureDir(t), "state.db")
	s := openTestStore(t, Options{})
	stopped, cancel := context.WithCancel(ctx)
	_, err := s.ImportHermes(stopped, src, HermesImportOptions{BatchMessages: 2, OnProgress: func(done, _ int64) {
		if done >= 6 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped import = %v, want context.Canceled", err)
	}
	res, err := s.ImportHermes(ctx, src, HermesImportOptions{BatchMessages: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported+res.Updated+res.Unchanged != 7 || res.Imported == 7 || res.Messages >= 29 {
		t.Errorf("resumed import = %+v: want the rest of the 7 sessions and 29 messages", res)
	}
	clean := openTestStore(t, Options{})
	if _, err := clean.ImportHermes(ctx, src, HermesImportOptions{}); err != nil {
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
