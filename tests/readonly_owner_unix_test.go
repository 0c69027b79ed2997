//go:build unix

package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A 0400 store read by its owner, who is not root (as root the CLI runs
// as nobody, who then owns the file and its directory): every read
// command works, each of them more than once, and the file keeps its
// mode. The first read's connection leaves a -wal with the file's mode
// (0400, as SQLite gives it); on 63b5fb9 every read after that failed
// with "cannot be written by this user … invalid _pragma … unable to open
// database file", because the driver's VFS opens a WAL read-write or not
// at all (issue 38).
func TestCLI_ReadOnlyModeFile_OwnerReads(t *testing.T) {
	base := t.TempDir()
	letReach(base)
	dir := filepath.Join(base, "own")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	if r := cli(t, env, "", "session", "new", "--id", "s1"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := cli(t, env, "", "append", "s1", "--role", "user", "--content", "kept under 0400"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if os.Geteuid() == 0 {
		entries, _ := os.ReadDir(dir)
		paths := []string{dir}
		for _, e := range entries {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
		for _, p := range paths {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) cliResult {
		cmd := exec.Command(cliPath, append([]string{"--db", path}, args...)...)
		cmd.Env = []string{"HOME=/nonexistent"}
		asUnprivileged(cmd)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		code := 0
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return cliResult{out.String(), errOut.String(), code}
	}
	reads := []struct {
		args []string
		want string
	}{
		{[]string{"sessions"}, "s1"},
		{[]string{"messages", "s1"}, "kept under 0400"},
		{[]string{"search", "kept", "--marks"}, ">>>kept<<<"},
		{[]string{"conversation", "s1"}, "kept under 0400"},
		{[]string{"export"}, "kept under 0400"},
		{[]string{"verify"}, "verified"},
	}
	for round := 1; round <= 2; round++ {
		for _, tt := range reads {
			if r := run(tt.args...); r.code != 0 || !strings.Contains(r.stdout, tt.want) {
				t.Errorf("round %d: %v of a 0400 store by its owner: exit %d, stdout %q, stderr %q; want exit 0 and %q",
					round, tt.args, r.code, r.stdout, r.stderr, tt.want)
			}
		}
	}
	if r := run("append", "s1", "--role", "user", "--content", "x"); r.code != 1 || !strings.Contains(r.stderr, "read-only") {
		t.Errorf("append to a 0400 store: exit %d %q, want 1 and read-only", r.code, r.stderr)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o400 {
		t.Errorf("the store's mode after the reads: %v %v, want 0400 kept", fi.Mode().Perm(), err)
	}
}
