package tests

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessiondb/sessiondb/internal/needs"

	"github.com/sessiondb/sessiondb/db"
)

// Two or more OS processes opening the same fresh file at once, 20 rounds:
// none fails, and each migration is recorded (and so applied) once.
func TestRacingFreshOpensAcrossProcesses(t *testing.T) {
	const rounds, racers = 20, 4
	// Every migration (version 0 is goose's own) applied exactly once.
	versions := []string{"0:1"}
	for i := range migrationCount(t) {
		versions = append(versions, fmt.Sprintf("%d:1", i+1))
	}
	want := strings.Join(versions, ",") + "\n1\n"
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "state.db")
		start := time.Now().Add(300 * time.Millisecond).Format(time.RFC3339Nano)
		var wg sync.WaitGroup
		outs := make([][]byte, racers)
		errs := make([]error, racers)
		for i := range racers {
			wg.Go(func() {
				outs[i], errs[i] = helper(t, "open", path, "SESSIONDB_TEST_START="+start).CombinedOutput()
			})
		}
		wg.Wait()
		for i := range racers {
			if errs[i] != nil {
				t.Fatalf("round %d racer %d: %v\n%s", round, i, errs[i], outs[i])
			}
		}
		got := runPython(t, `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT group_concat(v || ':' || n) FROM (SELECT version_id v, COUNT(*) n FROM goose_db_version GROUP BY version_id ORDER BY version_id)").fetchone()[0])
print(c.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
`, path)
		if got != want {
			t.Fatalf("round %d: migrations and sessions = %q, want %q (each migration once, one session)", round, got, want)
		}
	}
}

// A database written by sessiondb passes integrity_check under Python's own
// sqlite3 module, and its rows read back there byte for byte.
func TestPythonReadsWhatWeWrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "s1", Source: "cli", Title: "Ünïcode title"}); err != nil {
		t.Fatal(err)
	}
	contents := []string{"plain", "\x00json:{\"k\":1}", "日本語 and emoji 🚀", strings.Repeat("long ", 10000)}
	for i, c := range contents {
		role := db.RoleUser
		if i%2 == 1 {
			role = db.RoleAssistant
		}
		if _, err := s.AppendMessage(ctx, "s1", db.NewMessage{Role: role, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	// Python reads while the store is still open (WAL, shared), then again
	// after Close. Another program querying messages_fts sees indexed rows
	// only (the store's own Search also covers the queue), so the first read
	// comes after IndexNow: appends return before the background indexer runs.
	if err := s.IndexNow(ctx); err != nil {
		t.Fatal(err)
	}
	read := func() {
		t.Helper()
		out := runPython(t, `
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
check = [r[0] for r in c.execute("PRAGMA integrity_check")]
s = c.execute("SELECT title, message_count FROM sessions WHERE id = 's1'").fetchone()
rows = [r[0] for r in c.execute("SELECT content FROM messages WHERE session_id = 's1' ORDER BY id")]
hits = c.execute("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'emoji'").fetchone()[0]
print(json.dumps({"check": check, "title": s[0], "count": s[1], "contents": rows, "fts_hits": hits}))
`, path)
		var got struct {
			Check    []string `json:"check"`
			Title    string   `json:"title"`
			Count    int      `json:"count"`
			Contents []string `json:"contents"`
			FTSHits  int      `json:"fts_hits"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("python output %q: %v", out, err)
		}
		if diff := cmp.Diff([]string{"ok"}, got.Check); diff != "" {
			t.Errorf("integrity_check (-want +got):\n%s", diff)
		}
		if got.Title != "Ünïcode title" || got.Count != len(contents) || got.FTSHits != 1 {
			t.Errorf("python read title %q count %d fts hits %d", got.Title, got.Count, got.FTSHits)
		}
		if diff := cmp.Diff(contents, got.Contents); diff != "" {
			t.Errorf("contents as Python reads them (-wrote +read):\n%s", diff)
		}
	}
	read()
	s.Close()
	read()
}

// The sqlite3 shell, where installed, agrees too.
func TestSQLiteShellIntegrityCheck(t *testing.T) {
	shell := needs.Program(t, "sqlite3", "sqlite3")
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	if _, err := s.CreateSession(t.Context(), db.NewSession{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	out, err := exec.Command(shell, path, "PRAGMA integrity_check; PRAGMA journal_mode;").CombinedOutput()
	if err != nil || string(out) != "ok\nwal\n" {
		t.Errorf("sqlite3 shell: %q %v", out, err)
	}
}

// migrationCount is how many migrations ship: the schema version a fresh
// store ends at.
func migrationCount(t *testing.T) int {
	t.Helper()
	sqlFiles, err := filepath.Glob("../migrations/0*_*.sql")
	if err != nil || len(sqlFiles) == 0 {
		t.Fatalf("migrations: %v %v", sqlFiles, err)
	}
	goFiles, err := filepath.Glob("../migrations/0*_*.go") // migrations written in Go
	if err != nil {
		t.Fatal(err)
	}
	n := len(sqlFiles)
	for _, f := range goFiles {
		if !strings.HasSuffix(f, "_test.go") {
			n++
		}
	}
	return n
}
