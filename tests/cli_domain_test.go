package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// TestCLI_Domain walks the lineage, conversation, rewind, flag, locks and
// delete commands on one database, with what each bad input gets.
func TestCLI_Domain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	steps := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring, unless empty
		stderr string // substring, unless empty
	}{
		{name: "Parent", args: []string{"session", "new", "--id", "p"}},
		{name: "Delegate", args: []string{"session", "new", "--id", "d", "--parent", "p", "--kind", "delegate"}},
		{name: "Branch", args: []string{"session", "new", "--id", "b", "--parent", "p", "--kind", "branch"}},
		{name: "BadKind", args: []string{"session", "new", "--id", "x", "--parent", "p", "--kind", "cousin"}, code: 2, stderr: "child kind"},
		{name: "KindWithoutParent", args: []string{"session", "new", "--id", "x", "--kind", "branch"}, code: 2, stderr: "needs a parent"},
		{name: "Q1", args: []string{"append", "p", "--role", "user", "--content", "first question"}, stdout: "1"},
		{name: "A1", args: []string{"append", "p", "--role", "assistant", "--content", "first answer"}, stdout: "2"},
		{name: "Q2", args: []string{"append", "p", "--role", "user", "--content", "second question"}, stdout: "3"},
		{name: "Lineage", args: []string{"--json", "lineage", "p"}, stdout: `"id": "p"`},
		{name: "LineageGhost", args: []string{"lineage", "ghost"}, code: 3},
		{name: "Conversation", args: []string{"conversation", "p"}, stdout: "second question"},
		{name: "RewindNoTarget", args: []string{"rewind", "p"}, code: 2, stderr: "--to"},
		{name: "RewindToAssistant", args: []string{"rewind", "p", "--to", "2"}, code: 2, stderr: "user message"},
		{name: "RewindStaleContent", args: []string{"rewind", "p", "--to", "3", "--expect-content", "other"}, code: 1, stderr: "the row changed since it was read"},
		{name: "Rewind", args: []string{"rewind", "p", "--to", "3", "--expect-content", "second question"}, stdout: "rewound 1 message; the conversation now ends at #2"},
		{name: "ConversationAfterRewind", args: []string{"--json", "conversation", "p"}, stdout: `"first answer"`},
		{name: "Pin", args: []string{"flag", "p", "pin"}, stdout: "pin: 1 session changed"},
		{name: "UnknownFlag", args: []string{"flag", "p", "sparkle"}, code: 2, stderr: "unknown flag"},
		{name: "ShowPinned", args: []string{"--json", "session", "show", "p"}, stdout: `"pinned": true`},
		{name: "LocksFree", args: []string{"locks", "p"}, stdout: "free"},
		{name: "DeleteDryRun", args: []string{"delete", "p"}, stdout: "would delete 2 sessions: p, d"},
		{name: "StillThere", args: []string{"session", "show", "p"}, stdout: "id:"},
		{name: "Delete", args: []string{"delete", "p", "--yes"}, stdout: "deleted 2 sessions: p, d"},
		{name: "DelegateGone", args: []string{"session", "show", "d"}, code: 3},
		{name: "BranchOrphaned", args: []string{"--json", "session", "show", "b"}, stdout: `"id": "b"`},
		{name: "EndBranch", args: []string{"session", "end", "b", "--reason", "done"}},
		{name: "PruneBadAge", args: []string{"prune", "--older-than", "soon"}, code: 2, stderr: "bad age"},
		{name: "PruneNothingOldEnough", args: []string{"prune", "--older-than", "1d"}, stdout: "pruned 0 sessions"},
		{name: "PruneAll", args: []string{"--json", "prune", "--older-than", "1ns"}, stdout: `"pruned": 1`},
		{name: "Vacuum", args: []string{"vacuum"}, stdout: "vacuumed:"},
		{name: "Stats", args: []string{"stats"}, stdout: fmt.Sprintf("schema version:   %d", migrationCount(t))},
		{name: "StatsJSON", args: []string{"--json", "stats"}, stdout: `"sessions": 0`},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := cli(t, env, "", st.args...)
			if r.code != st.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, st.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, st.stdout) {
				t.Errorf("stdout %q does not contain %q", r.stdout, st.stdout)
			}
			if !strings.Contains(r.stderr, st.stderr) {
				t.Errorf("stderr %q does not contain %q", r.stderr, st.stderr)
			}
		})
	}
	if r := cli(t, env, "", "--json", "session", "show", "b"); strings.Contains(r.stdout, "parent_session_id") {
		t.Errorf("the branch should have lost its parent link: %s", r.stdout)
	}
}

// TestCLI_ExportImport: export to a file, import into another database,
// export again — the same bytes; a malformed file is refused whole.
func TestCLI_ExportImport(t *testing.T) {
	dir := t.TempDir()
	a := []string{"SESSIONDB_PATH=" + filepath.Join(dir, "a.db")}
	b := []string{"SESSIONDB_PATH=" + filepath.Join(dir, "b.db")}
	file := filepath.Join(dir, "out.jsonl")
	mustRun := func(env []string, stdin string, args ...string) cliResult {
		t.Helper()
		r := cli(t, env, stdin, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	mustRun(a, "", "session", "new", "--id", "s", "--title", "Zürich trip")
	mustRun(a, "", "append", "s", "--role", "user", "--content", "line one\nline two")
	mustRun(a, "line\x00three", "append", "s", "--role", "assistant", "--content-file", "-")
	if r := mustRun(a, "", "export", "-o", file); !strings.Contains(r.stderr, "exported 1 session, 2 messages") {
		t.Errorf("export summary: %q", r.stderr)
	}
	if r := mustRun(b, "", "import", file); !strings.Contains(r.stdout, "imported 1 session (2 messages)") {
		t.Errorf("import summary: %q", r.stdout)
	}
	ea, eb := mustRun(a, "", "export").stdout, mustRun(b, "", "export").stdout
	if ea != eb || !strings.Contains(ea, `"title":"Zürich trip"`) {
		t.Errorf("exports differ or lack the title:\n%s\n%s", ea, eb)
	}
	if r := mustRun(b, ea, "--json", "import", "-"); !strings.Contains(r.stdout, `"skipped": 1`) {
		t.Errorf("re-import from stdin: %s", r.stdout)
	}
	// The summary names what happened, counted in words that agree with
	// their number, and nothing that did not.
	if r := mustRun(b, ea, "import", "-"); r.stdout != "imported 0 sessions (0 messages); skipped 1 that exists\n" {
		t.Errorf("re-import summary: %q", r.stdout)
	}
	bad := strings.Replace(ea, `"role":"user"`, `"role":"robot"`, 1)
	r := cli(t, b, bad, "import", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "line 3") || !strings.Contains(r.stderr, "2 problems in the file") {
		t.Errorf("malformed import: exit %d, stderr %q; want 2 naming line 3", r.code, r.stderr)
	}
	if r := cli(t, b, ea+"not json\n", "import", "-"); r.code != 2 || !strings.Contains(r.stderr, "1 problem in the file") {
		t.Errorf("one bad line: exit %d, stderr %q; want 2 and \"1 problem\"", r.code, r.stderr)
	}
	if r := cli(t, b, "", "import", filepath.Join(dir, "missing.jsonl")); r.code != 2 {
		t.Errorf("missing file: exit %d, want 2", r.code)
	}
}

// TestCLI_ProgressOnlyOnATerminal: a long command draws a progress bar on
// a terminal (script(1) gives it one) and stays quiet when its output is a
// pipe or --json is set.
func TestCLI_ProgressOnlyOnATerminal(t *testing.T) {
	scriptPath := needs.Program(t, "script", "bsdutils")
	path := filepath.Join(t.TempDir(), "state.db")
	onTerminal := func(args string) string {
		cmd := exec.Command(scriptPath, "-qec", cliPath+" "+args+" >/dev/null", "/dev/null")
		cmd.Env = append(os.Environ(), "SESSIONDB_PATH="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := onTerminal("demo"); !strings.Contains(out, "demo") || !strings.Contains(out, "/51)") {
		t.Errorf("no progress bar on a terminal: %q", out)
	}
	copyTo := filepath.Join(t.TempDir(), "copy.db")
	if out := onTerminal("copy --from " + path + " --to " + copyTo); !strings.Contains(out, "copy: read") || !strings.Contains(out, "copy: write") {
		t.Errorf("copy drew no progress bars on a terminal: %q", out)
	}
	if out := onTerminal("--json demo"); out != "" {
		t.Errorf("--json on a terminal drew: %q", out)
	}
	if r := cli(t, []string{"SESSIONDB_PATH=" + path}, "", "demo"); strings.Contains(r.stderr, "demo") {
		t.Errorf("a pipe got a progress bar: %q", r.stderr)
	}
}
