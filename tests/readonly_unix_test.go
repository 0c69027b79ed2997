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
	if os.Geteuid() == 0 {
		for d := base; d != "/" && d != "."; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
				os.Chmod(d, fi.Mode().Perm()|0o005) // let the unprivileged user reach dir
			}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
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

// A Hermes state.db this user cannot write beside (another user's file) is
// refused with an error that says why and what to do, and is left as it was.
func TestCLI_ImportHermesUnwritableSource(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
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
