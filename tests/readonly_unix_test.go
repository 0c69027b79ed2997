//go:build unix

package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// A read-only directory gets a clear error naming the path and the fix. As
// root (CI) the CLI runs as an unprivileged user, since root ignores modes.
func TestCLI_ReadOnlyDirectory(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.db")
	cmd := exec.Command(cliPath, "--db", path, "init")
	letReach(base)
	asUnprivileged(cmd)
	cmd.Env = []string{"HOME=/nonexistent"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("init in a read-only directory: %v\n%s", err, out)
	}
	for _, want := range []string{path, "read-only", "chmod"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("error %q does not mention %q", out, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused open left files behind: %v", entries)
	}
}

// letReach lets the unprivileged user of asUnprivileged reach files
// under dir, when the test runs as root.
func letReach(dir string) {
	if os.Geteuid() != 0 {
		return
	}
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(d, fi.Mode().Perm()|0o005)
		}
	}
}

// asUnprivileged runs cmd as nobody when the test runs as root (root
// ignores directory modes); otherwise as the current user.
func asUnprivileged(cmd *exec.Cmd) {
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
}

// A store in a directory its user cannot write still reads: the read
// commands work, verify calls the healthy file verified (exit 0, not
// "corrupt"), and a write fails saying read-only — with nothing created in
// the directory.
func TestCLI_ReadOnlyDirectory_Reads(t *testing.T) {
	base := t.TempDir()
	letReach(base)
	dir := filepath.Join(base, "ro")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	r := cli(t, env, "", "session", "new", "--id", "s1")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := cli(t, env, "", "append", "s1", "--role", "user", "--content", "readable without write access"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if os.Geteuid() == 0 {
		for _, p := range []string{dir, path} {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
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
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sessions"}, "s1"},
		{[]string{"messages", "s1"}, "readable without write access"},
		{[]string{"search", "readable", "--marks"}, ">>>readable<<<"},
		{[]string{"conversation", "s1"}, "readable without write access"},
		{[]string{"export"}, "readable without write access"},
		{[]string{"verify"}, "verified"},
	} {
		if r := run(tt.args...); r.code != 0 || !strings.Contains(r.stdout, tt.want) {
			t.Errorf("%v in a read-only directory: exit %d, stdout %q, stderr %q; want exit 0 and %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
	if r := run("append", "s1", "--role", "user", "--content", "x"); r.code != 1 || !strings.Contains(r.stderr, "read-only") {
		t.Errorf("append in a read-only directory: exit %d %q, want 1 and read-only", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // state.db and its migration lock
		t.Errorf("reads in a read-only directory left %v", entries)
	}
}

// A Hermes state.db this user cannot write beside (another user's file) is
// refused with an error that says why and what to do, and is left as it was.
func TestCLI_ImportHermesUnwritableSource(t *testing.T) {
	if os.Geteuid() != 0 {
		if needs.InCI() {
			t.Fatal("needs root to run the CLI as another user (CI runs as root)")
		}
		t.Skip("needs root (to run the CLI as another user): sudo go test ./tests -run TestCLI_ImportHermesUnwritableSource")
	}
	src := hermesFixtureCopy(t)
	base := filepath.Dir(filepath.Dir(src))
	for d := filepath.Dir(src); d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(d, fi.Mode().Perm()|0o005)
		}
	}
	for _, n := range []string{src, src + "-wal", src + "-shm"} {
		os.Chmod(n, 0o644)
	}
	before := sum(t, src)
	storeDir := filepath.Join(base, "nobody")
	os.Mkdir(storeDir, 0o700)
	os.Chown(storeDir, 65534, 65534)
	cmd := exec.Command(cliPath, "--db", filepath.Join(storeDir, "state.db"), "import", "--from", "hermes", src)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Env = []string{"HOME=/nonexistent"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("import of another user's file: %v\n%s", err, out)
	}
	for _, want := range []string{src, "read-only", "-shm", "copy"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("error %q does not mention %q", out, want)
		}
	}
	if sum(t, src) != before {
		t.Errorf("the refused import changed the file")
	}
}
