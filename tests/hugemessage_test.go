package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// TestCLI_HugeMessage is issue 38's hang: a 100 MB message through
// `append --content-file` was acknowledged, then the background indexer
// ran the SQLite driver out of memory and panicked, Close deadlocked and
// the CLI never exited; the row stayed queued and hung every later
// command. Now the append is refused (exit 2, too large, nothing written),
// and a file that already holds such a row (written by another program,
// here the sqlite3 shell) stays usable: every command returns within its
// deadline, lists the row whole, searches, takes appends and verifies.
func TestCLI_HugeMessage(t *testing.T) {
	shell, err := exec.LookPath("sqlite3")
	if err != nil {
		if needs.InCI() {
			t.Fatal("the sqlite3 shell is needed in CI (it writes the huge row as another program would)")
		}
		t.Skip("needs the sqlite3 shell to write a huge row as another program: apt-get install sqlite3")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	run := func(args ...string) cliResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, cliPath, append([]string{"--db", path}, args...)...)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("%v did not return within 90 s (killed): %s", args, errOut.String())
		}
		var exit *exec.ExitError
		code := 0
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return cliResult{out.String(), errOut.String(), code}
	}
	if r := run("session", "new", "--id", "s1"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run("append", "s1", "--role", "user", "--content", "before the huge one"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	big := filepath.Join(dir, "big.txt")
	var b strings.Builder
	words := []string{"alpha", "beta", "gamma", "delta", "tool", "output", "line"}
	for i := 0; b.Len() < 100<<20; i++ {
		b.WriteString(words[(i*5+i/7)%len(words)])
		if i%12 == 11 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteString("hugeend")
	if err := os.WriteFile(big, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	r := run("append", "s1", "--role", "tool", "--tool-name", "read", "--content-file", big)
	if r.code != 2 || !strings.Contains(r.stderr, "too large") || !strings.Contains(r.stderr, "at most") {
		t.Fatalf("append of 100 MB: exit %d %q, want 2 and too large with the limit", r.code, r.stderr)
	}
	if r := run("messages", "s1"); r.code != 0 || strings.Contains(r.stdout, "hugeend") {
		t.Fatalf("after the refused append: exit %d, %d bytes; want only the first message", r.code, len(r.stdout))
	}

	// Another program writes the row anyway. (The shell here, 3.40, lacks
	// unixepoch('subsec'), which the trigger that stamps when the index
	// fell behind calls; the stamp is set first so that it does not run.)
	ins := fmt.Sprintf("UPDATE fts_mark SET behind_since = %[3]d WHERE behind_since = 0;"+
		"INSERT INTO messages (session_id, role, content, tool_name, created_at) VALUES ('s1', 'tool', readfile('%[1]s'), 'read', %[2]d);"+
		"UPDATE sessions SET message_count = message_count + 1 WHERE id = 's1';", big, time.Now().UnixMilli(), time.Now().UnixMilli())
	if out, err := exec.Command(shell, path, ins).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	steps := []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"sessions"}, "s1"},
		{[]string{"messages", "s1"}, "hugeend"},
		{[]string{"search", "before", "--marks"}, ">>>before<<<"},
		{[]string{"append", "s1", "--role", "user", "--content", "after the huge one"}, ""},
		{[]string{"search", "after", "--marks"}, ">>>after<<<"},
		{[]string{"verify"}, "verified"},
		{[]string{"messages", "s1"}, "after the huge one"},
	}
	for _, st := range steps {
		r := run(st.args...)
		if r.code != 0 || !strings.Contains(r.stdout, st.want) {
			t.Errorf("%v on a file holding a 100 MB row: exit %d, stderr %q; want exit 0 and %q in %d bytes of stdout",
				st.args, r.code, r.stderr, st.want, len(r.stdout))
		}
	}
}
