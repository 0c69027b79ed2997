//go:build unix

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dirSnapshot is every entry of dir with its mode, owner and bytes: equal
// snapshots mean nothing there was created, removed, chmod-ed, chown-ed
// or written.
func dirSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap := map[string]string{}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		v := fmt.Sprintf("%v uid %d gid %d", fi.Mode(), st.Uid, st.Gid)
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			v += " " + string(b)
		}
		snap[e.Name()] = v
	}
	return snap
}

// Issue 38 item 1 through the CLI: pointed at a file that is not a
// sessiondb store — a copy of /etc/passwd, another program's SQLite
// database (written by Python's sqlite3: a table users, rollback journal,
// 0644), a directory, a FIFO — every command, reading or writing, exits 4
// (not a store; distinct from damage, 1) naming what it found, and the
// directory is left byte for byte and mode for mode: no chmod, no
// migration, no WAL switch, no -shm or .migrate.lock. On 63b5fb9 `search`
// chmod-ed the passwd copy 0600 and left passwd-shm and
// passwd.migrate.lock; `sessions` and `session new` migrated the other
// program's database, switched it to WAL and chmod-ed it 0600, exiting 0;
// `repair` moved a text file aside, exiting 0.
func TestCLI_NotAStoreIsNeverChanged(t *testing.T) {
	passwd := "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
	files := []struct {
		name  string
		make  func(t *testing.T, path string)
		found string
	}{
		{"passwd", func(t *testing.T, p string) { os.WriteFile(p, []byte(passwd), 0o644) }, `not a SQLite file (it begins "root:x:0:0:root:/root:/b")`},
		{"app.db", func(t *testing.T, p string) {
			runPython(t, `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
c.execute("INSERT INTO users (name) VALUES ('alice')")
c.commit()
c.close()
`, p)
			os.Chmod(p, 0o644)
		}, "a SQLite database of another program (tables: users)"},
		{"dir", func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, "a directory"},
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "a named pipe (FIFO)"},
	}
	commands := [][]string{
		{"search", "x"}, {"sessions"}, {"messages", "s"}, {"export"}, {"stats"},
		{"session", "new"}, {"append", "s", "--role", "user", "--content", "x"}, {"init"},
		{"repair"}, {"verify"}, {"vacuum"},
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, f.name)
			f.make(t, path)
			before := dirSnapshot(t, dir)
			for _, args := range commands {
				r := cli(t, nil, "", append([]string{"--db", path}, args...)...)
				if r.code != 4 || !strings.Contains(r.stdout+r.stderr, f.found) {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 4 naming %q", strings.Join(args, " "), r.code, r.stdout, r.stderr, f.found)
				}
				if diff := cmp.Diff(before, dirSnapshot(t, dir)); diff != "" {
					t.Fatalf("%s changed the directory (-before +after):\n%s", strings.Join(args, " "), diff)
				}
			}
			r := cli(t, nil, "", "--db", path, "--json", "sessions")
			if !strings.Contains(r.stderr, `"error":"not_a_store"`) {
				t.Errorf("--json sessions: %q, want the code not_a_store", r.stderr)
			}
		})
	}
}

// Issue 38 item 1: a read command on an empty file does not make a store
// of it (on 63b5fb9 `sessions` turned it into a 200 KB store, 0600); a
// write does, keeping the file's mode. A group-shared store (0640) stays
// 0640 through a read and a write (63b5fb9 narrowed it to 0600).
func TestCLI_ReadsChangeNoFileAndNoMode(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o640)
	before := dirSnapshot(t, dir)
	for _, args := range [][]string{{"sessions"}, {"search", "x"}, {"stats"}} {
		r := cli(t, nil, "", append([]string{"--db", empty}, args...)...)
		if r.code != 3 || !strings.Contains(r.stderr, "no store") {
			t.Errorf("%v on an empty file: exit %d %q, want 3 (no store yet)", args, r.code, r.stderr)
		}
	}
	if diff := cmp.Diff(before, dirSnapshot(t, dir)); diff != "" {
		t.Fatalf("a read changed the directory (-before +after):\n%s", diff)
	}
	if r := cli(t, nil, "", "--db", empty, "session", "new"); r.code != 0 {
		t.Fatalf("session new on an empty file: %d %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"sessions"}, {"session", "new"}} {
		if r := cli(t, nil, "", append([]string{"--db", empty}, args...)...); r.code != 0 {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
		for _, name := range []string{"empty.db", "empty.db.migrate.lock"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("after %v: %s: %v %v, want 0640 kept", args, name, fi, err)
			}
		}
	}
}
