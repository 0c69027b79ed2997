package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// onTerminal runs the CLI with a terminal as its standard output (script(1)
// gives it one) and returns what the terminal showed.
func onTerminal(t *testing.T, env []string, args string) string {
	t.Helper()
	scriptPath := needs.Program(t, "script", "bsdutils")
	cmd := exec.Command(scriptPath, "-qec", cliPath+" "+args, "/dev/null")
	cmd.Env = append(append(os.Environ(), "NO_COLOR="), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", args, err, out)
	}
	return strings.ReplaceAll(string(out), "\r\n", "\n")
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestCLI_SearchHighlight: on a terminal a match is bold colour and the
// markers are gone; stored text holding the markers stays text (it cannot
// fake a match); in a pipe the output is the text as stored, with no
// escape sequence and no markers unless --marks asks for them.
func TestCLI_SearchHighlight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	for _, args := range [][]string{
		{"session", "new", "--id", "s1"},
		{"append", "s1", "--role", "user", "--content", "a >>>fake<<< match, and the real needle"},
	} {
		if r := cli(t, env, "", args...); r.code != 0 {
			t.Fatalf("%v: %s", args, r.stderr)
		}
	}
	out := onTerminal(t, append(env, "COLUMNS=200"), "search needle")
	if !strings.Contains(out, "\x1b[1;33mneedle\x1b[0m") || strings.Contains(out, ">>>needle<<<") {
		t.Errorf("terminal: the match is not highlighted, or still marked:\n%q", out)
	}
	if !strings.Contains(out, "a >>>fake<<< match") || strings.Contains(out, "\x1b[1;33mfake") {
		t.Errorf("terminal: stored markers were taken for a match:\n%q", out)
	}
	r := cli(t, env, "", "search", "needle")
	if strings.ContainsRune(r.stdout, 0x1b) || !strings.Contains(r.stdout, "a >>>fake<<< match, and the real needle") {
		t.Errorf("pipe: want the text as stored, no markers added, got:\n%q", r.stdout)
	}
	if r := cli(t, env, "", "search", "needle", "--marks"); !strings.Contains(r.stdout, "the real >>>needle<<<") {
		t.Errorf("pipe with --marks: want the match marked, got:\n%q", r.stdout)
	}
	if out := onTerminal(t, append(env, "NO_COLOR=1"), "search needle"); strings.ContainsRune(out, 0x1b) || !strings.Contains(out, "the real >>>needle<<<") {
		t.Errorf("NO_COLOR: want markers and no escape sequences on the terminal:\n%q", out)
	}
}

// TestCLI_RowsFitTheTerminal: on a terminal of 50 columns no table row is
// wider than 50 (wide characters count two); in a pipe rows are whole.
func TestCLI_RowsFitTheTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	long := strings.Repeat("日本語 wide text ", 5)
	for _, args := range [][]string{
		{"session", "new", "--id", "s1", "--title", "a very long title " + long},
		{"append", "s1", "--role", "user", "--content", "needle " + long},
	} {
		if r := cli(t, env, "", args...); r.code != 0 {
			t.Fatalf("%v: %s", args, r.stderr)
		}
	}
	for _, args := range []string{"sessions", "search needle", "lineage s1"} {
		out := onTerminal(t, append(env, "COLUMNS=50"), args)
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if w := displayWidth(sgr.ReplaceAllString(line, "")); w > 50 {
				t.Errorf("%s: a row of %d columns on a 50-column terminal: %q", args, w, line)
			}
		}
		if !strings.Contains(out, "…") {
			t.Errorf("%s: nothing was cut:\n%s", args, out)
		}
		if r := cli(t, env, "", strings.Fields(args)...); !strings.Contains(r.stdout, strings.TrimSpace(long)[:30]) {
			t.Errorf("%s in a pipe: rows were cut:\n%s", args, r.stdout)
		}
	}
}

// displayWidth counts East Asian wide characters as two columns.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case r >= 0x1100 && (r <= 0x115f || (r >= 0x2e80 && r <= 0xa4cf) || (r >= 0xac00 && r <= 0xd7a3) || (r >= 0xf900 && r <= 0xfaff) || (r >= 0xff00 && r <= 0xff60)):
			w += 2
		default:
			w++
		}
	}
	return w
}

// TestCLI_TextAndJSONKeepWhatWasStored: JSON writes <, > and & as they
// are; the text view keeps code indentation (a tab is four spaces);
// counts are singular for one.
func TestCLI_TextAndJSONKeepWhatWasStored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	code := "func f() {\n\tif a < b && c > d {\n\t\treturn\n\t}\n}"
	for _, args := range [][]string{
		{"session", "new", "--id", "s1"},
		{"append", "s1", "--role", "assistant", "--content", code},
		{"append", "s1", "--role", "user", "--content", "  two spaces\n    four spaces"},
	} {
		if r := cli(t, env, "", args...); r.code != 0 {
			t.Fatalf("%v: %s", args, r.stderr)
		}
	}
	r := cli(t, env, "", "messages", "s1", "--json")
	if !strings.Contains(r.stdout, `"content": "func f() {\n\tif a < b && c > d {`) || strings.Contains(r.stdout, `\u003c`) || strings.Contains(r.stdout, `\u0026`) {
		t.Errorf("JSON escapes <, > or &:\n%s", r.stdout)
	}
	r = cli(t, env, "", "messages", "s1")
	for _, want := range []string{
		"\n    func f() {\n        if a < b && c > d {\n            return\n        }\n    }\n",
		"\n      two spaces\n        four spaces\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the text view lost the indentation: want %q in\n%s", want, r.stdout)
		}
	}
	r = cli(t, env, "", "demo")
	if !strings.Contains(r.stdout, "(6 messages, 1 tool call)") || strings.Contains(r.stdout, "1 tool calls") {
		t.Errorf("demo: plurals wrong:\n%s", r.stdout)
	}
}

// TestCLI_JSONErrors: under --json every error is one JSON object on
// stderr with a stable code, and the exit code is unchanged.
func TestCLI_JSONErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	if r := cli(t, env, "", "session", "new", "--id", "s1"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	tests := []struct {
		args []string
		code string
		exit int
	}{
		{[]string{"session", "show", "ghost"}, "not_found", 3},
		{[]string{"session", "new", "--id", "s1"}, "exists", 1},
		{[]string{"append", "s1", "--role", "robot", "--content", "x"}, "invalid_input", 2},
		{[]string{"sessions", "--bogus"}, "usage", 2},
		{[]string{"frobnicate"}, "usage", 2},
		{[]string{"--db", filepath.Join(t.TempDir(), "none.db"), "stats"}, "no_database", 3},
	}
	for _, tt := range tests {
		r := cli(t, env, "", append([]string{"--json"}, tt.args...)...)
		var e struct{ Error, Message string }
		if err := json.Unmarshal([]byte(r.stderr), &e); err != nil || strings.Count(r.stderr, "\n") != 1 ||
			e.Error != tt.code || e.Message == "" || r.code != tt.exit {
			t.Errorf("--json %v: exit %d, stderr %q; want exit %d and one object with error %q", tt.args, r.code, r.stderr, tt.exit, tt.code)
		}
	}
}

// TestCLI_LockErrorOnceAndPatienceCoherent: a write lock held past the
// patience gives one line on stderr (the error, not also a log line), and
// --write-patience alone bounds append too (3 x, not the library's 60 s).
func TestCLI_LockErrorOnceAndPatienceCoherent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	if r := cli(t, env, "", "session", "new", "--id", "s1"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	_, wait := holdWriteLock(t, path, 5*time.Second)
	start := time.Now()
	r := cli(t, env, "", "--write-patience", "300ms", "append", "s1", "--role", "user", "--content", "x")
	took := time.Since(start)
	if r.code != 75 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "database is locked") {
		t.Errorf("append under a held lock: exit %d, stderr %q; want 75 and one line", r.code, r.stderr)
	}
	if took > 4*time.Second { // 900 ms of patience; the hold is 5 s
		t.Errorf("append with --write-patience 300ms waited %v", took)
	}
	r = cli(t, env, "", "--json", "--write-patience", "300ms", "meta", "set", "k", "v")
	if r.code != 75 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, `"error":"locked"`) {
		t.Errorf("--json meta set under a held lock: exit %d, stderr %q; want 75 and one JSON line", r.code, r.stderr)
	}
	wait()
	r = cli(t, env, "", "help", "append")
	if !strings.Contains(r.stdout, "--transcript-patience D") || !strings.Contains(r.stdout, "3 × the write patience") {
		t.Errorf("help does not explain which patience append uses:\n%s", r.stdout)
	}
}
