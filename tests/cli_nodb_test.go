package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_ReadsNeverCreateADatabase: every command that reads (or changes
// what is already there) on a path with no database exits 3 with one
// line naming the path, and leaves nothing behind: no directory, no file,
// no lock file. Only the commands that start a store create one.
func TestCLI_ReadsNeverCreateADatabase(t *testing.T) {
	commands := [][]string{
		{"sessions"}, {"session", "show", "s1"}, {"session", "end", "s1", "--reason", "x"},
		{"messages", "s1"}, {"search", "hello"}, {"stats"}, {"export"}, {"export", "-o", "OUT"},
		{"usage"}, {"usage", "s1"}, {"lineage", "s1"}, {"conversation", "s1"}, {"meta", "get", "k"},
		{"locks", "s1"}, {"handoff", "s1"}, {"title", "s1"}, {"title", "s1", "new title"},
		{"append", "s1", "--role", "user", "--content", "hi"}, {"rewind", "s1", "--to", "1"},
		{"flag", "s1", "pin"}, {"delete", "s1"}, {"prune"}, {"vacuum"}, {"resume", "s1"},
		{"bulk", "archive", "--dry-run"}, {"bulk", "ghosts"}, {"mcp"},
	}
	for _, where := range []string{"MissingDir", "MissingFile"} {
		t.Run(where, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "mistyped", "state.db")
			if where == "MissingFile" {
				path = filepath.Join(root, "state.db")
			}
			for _, args := range commands {
				for i, a := range args {
					if a == "OUT" {
						args[i] = filepath.Join(root, "out.jsonl")
					}
				}
				for _, how := range [][]string{{"--db", path}, {"--json", "--db", path}} {
					r := cli(t, []string{"SESSIONDB_PATH=" + path}, "", append(how, args...)...)
					want := "sessiondb: no database at " + path + " (sessiondb init creates one)\n"
					if len(how) == 3 {
						want = `{"error":"no_database","message":"no database at ` + path + ` (sessiondb init creates one)"}` + "\n"
					}
					if r.code != 3 || r.stderr != want || r.stdout != "" {
						t.Errorf("sessiondb %v: exit %d, stdout %q, stderr %q; want exit 3 and %q", append(how, args...), r.code, r.stdout, r.stderr, want)
					}
				}
				if left, _ := os.ReadDir(root); len(left) > 0 {
					t.Fatalf("sessiondb %v on a missing database left %v behind", args, names(left))
				}
			}
			// The commands that start a store still do.
			if r := cli(t, nil, "", "--db", path, "meta", "set", "k", "v"); r.code != 0 {
				t.Fatalf("meta set on a new path: %d %s", r.code, r.stderr)
			}
			if r := cli(t, nil, "", "--db", path, "meta", "get", "k"); r.code != 0 || r.stdout != "v\n" {
				t.Errorf("meta get after meta set: %d %q %q", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func names(es []os.DirEntry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return strings.Join(out, ", ")
}
