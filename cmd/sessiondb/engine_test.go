package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The domain's commands run on PostgreSQL when --db or $SESSIONDB_PATH
// holds a postgres:// URL, with the same output as on a file.
func TestServerURL_DomainCommands(t *testing.T) {
	u := serverURL(t)
	steps := []struct {
		name   string
		args   []string
		code   int
		stdout string // exact, unless empty
	}{
		{"Init", []string{"init"}, 0, ""},
		{"NewSession", []string{"session", "new", "--id", "s1", "--title", "Fix the build"}, 0, "s1\n"},
		{"Append", []string{"append", "s1", "--role", "user", "--content", "the linker fails on windows", "--key", "k1"}, 0, "1\n"},
		{"AppendAgain", []string{"append", "s1", "--role", "user", "--content", "the linker fails on windows", "--key", "k1"}, 0, "1\n"},
		{"AppendReply", []string{"append", "s1", "--role", "assistant", "--content", "set CGO_ENABLED=0"}, 0, "2\n"},
		{"MetaSet", []string{"meta", "set", "team", "a"}, 0, ""},
		{"MetaGet", []string{"meta", "get", "team"}, 0, "a\n"},
		{"Title", []string{"title", "s1"}, 0, "Fix the build\n"},
		{"Unknown", []string{"messages", "ghost"}, 3, ""},
		{"Resume", []string{"resume", "s1"}, 0, ""},
		{"Lineage", []string{"lineage", "s1"}, 0, ""},
		{"Usage", []string{"usage", "s1"}, 0, ""},
		{"Pin", []string{"flag", "s1", "pin"}, 0, ""},
		{"BulkGhostsDryRun", []string{"bulk", "ghosts", "--dry-run"}, 0, ""},
		{"Export", []string{"export"}, 0, ""},
	}
	for _, st := range steps {
		code, stdout, stderr := runCLI(t, u, st.args...)
		if code != st.code || (st.stdout != "" && stdout != st.stdout) {
			t.Errorf("%s: sessiondb %q = %d, stdout %q, stderr %q; want %d, %q", st.name, st.args, code, stdout, stderr, st.code, st.stdout)
		}
	}

	if n := serverRows(t, u, "messages"); n != 2 {
		t.Errorf("the server holds %d messages, want 2", n)
	}

	code, stdout, stderr := runCLI(t, u, "sessions", "--json")
	var sessions []struct {
		ID           string `json:"id"`
		Title        string `json:"title"`
		MessageCount int64  `json:"message_count"`
	}
	if err := json.Unmarshal([]byte(stdout), &sessions); code != 0 || err != nil {
		t.Fatalf("sessions --json = %d, %v: %q %q", code, err, stdout, stderr)
	}
	if want := []struct {
		ID           string `json:"id"`
		Title        string `json:"title"`
		MessageCount int64  `json:"message_count"`
	}{{"s1", "Fix the build", 2}}; !cmp.Equal(sessions, want) {
		t.Errorf("sessions --json: %s", cmp.Diff(want, sessions))
	}

	code, stdout, stderr = runCLI(t, u, "search", "--json", "linker")
	if code != 0 || !strings.Contains(stdout, `"session_id": "s1"`) || strings.Contains(stdout, "CGO_ENABLED") {
		t.Errorf("search linker = %d, stdout %q, stderr %q; want the user message of s1 only", code, stdout, stderr)
	}
	if code, stdout, _ = runCLI(t, u, "messages", "s1"); code != 0 || !strings.Contains(stdout, "CGO_ENABLED=0") {
		t.Errorf("messages s1 = %d, %q", code, stdout)
	}

	// $SESSIONDB_PATH selects the engine as --db does.
	t.Setenv("SESSIONDB_PATH", u)
	var out, errOut strings.Builder
	if code := run(t.Context(), []string{"messages", "s1", "--json"}, strings.NewReader(""), &out, &errOut); code != 0 ||
		strings.Count(out.String(), `"role"`) != 2 {
		t.Errorf("SESSIONDB_PATH=URL messages s1 = %d, %q %q", code, out.String(), errOut.String())
	}
}

// The commands that work on the SQLite file itself refuse a server URL
// with the typed file-operation error (exit 2, code file_operation),
// before connecting: the server named here does not exist.
func TestServerURL_FileOperationsRefused(t *testing.T) {
	const u = "postgres://nobody:secret@db.invalid/agents?search_path=team_a"
	for _, args := range [][]string{
		{"verify"}, {"repair"}, {"vacuum"}, {"stats"}, {"bench"},
	} {
		code, stdout, stderr := runCLI(t, u, append([]string{"--json"}, args...)...)
		var e errorJSON
		if err := json.Unmarshal([]byte(stderr), &e); err != nil || code != exitUsage || e.Error != "file_operation" ||
			!strings.Contains(e.Message, "is an operation on a SQLite file and does not run on PostgreSQL") {
			t.Errorf("sessiondb %q on a URL = %d, stdout %q, stderr %q; want exit 2, file_operation", args, code, stdout, stderr)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("sessiondb %q printed the URL's password: %q", args, stderr)
		}
	}
}

func TestIsServerURL(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://h/db": true, "postgresql:///db?host=/tmp": true, "POSTGRES://h/db": true,
		"state.db": false, "/var/lib/postgres/state.db": false, "postgres.db": false, "file:postgres://x": false,
	} {
		if got := isServerURL(in); got != want {
			t.Errorf("isServerURL(%q) = %v, want %v", in, got, want)
		}
	}
}
