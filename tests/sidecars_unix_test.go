//go:build unix

package tests

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// The WAL holds every transcript written since the last checkpoint, and
// the shared memory indexes it: no other user may ever open either. A
// process polling the directory as nobody, keeping every descriptor it
// gets, opens none across many Opens (new files and existing ones),
// Verify calls and CLI read commands, under umask 000 and 022; and the
// files are 0600 as soon as they exist.
func TestSidecars_NeverReadableByOtherUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		needPrivilege(t, "root to run a poller as nobody")
	}
	for _, umask := range []int{0o000, 0o022} {
		t.Run(fmt.Sprintf("umask %03o", umask), func(t *testing.T) {
			dir := t.TempDir()
			for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
				if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
					os.Chmod(d, fi.Mode().Perm()|0o005) // nobody may look into dir
				}
			}
			poll := helper(t, "poll", dir)
			poll.Path = reachableCopy(t, os.Args[0]) // the test binary's own directory is 0700
			poll.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			stop, err := poll.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := poll.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			poll.Stderr = os.Stderr
			if err := poll.Start(); err != nil {
				t.Fatal(err)
			}
			defer poll.Process.Kill()

			old := syscall.Umask(umask)
			defer syscall.Umask(old)
			const rounds = 40
			for i := range rounds {
				path := filepath.Join(dir, fmt.Sprintf("s%d.db", i%8)) // new files, then existing ones
				s, err := db.Open(t.Context(), path, db.Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, side := range []string{"-wal", "-shm"} {
					if fi, err := os.Stat(path + side); err != nil || fi.Mode().Perm() != 0o600 {
						t.Fatalf("round %d: %s: %v, mode %v; want 0600", i, side, err, fi.Mode())
					}
				}
				if _, err := s.AppendMessage(t.Context(), mustSession(t, s), db.NewMessage{Role: db.RoleUser, Content: "secret transcript"}); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := db.Verify(t.Context(), path); err != nil {
					t.Fatal(err)
				}
				if i%8 == 7 {
					if b, err := exec.Command(cliPath, "--db", path, "sessions").CombinedOutput(); err != nil {
						t.Fatalf("sessions: %v\n%s", err, b)
					}
				}
			}
			stop.Close()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if err := poll.Wait(); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(line, "opened 0 read 0 wide 0") {
				t.Fatalf("a process running as nobody %s", strings.TrimSpace(line))
			}
			t.Logf("poller as nobody: %s", strings.TrimSpace(line))
		})
	}
}

// reachableCopy copies an executable to the CLI's directory (0755), where
// an unprivileged user can run it.
func reachableCopy(t *testing.T, exe string) string {
	t.Helper()
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(filepath.Dir(cliPath), filepath.Base(exe))
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// mustSession ensures the session "s" and returns its id.
func mustSession(t *testing.T, s *db.Store) string {
	t.Helper()
	if _, _, err := s.EnsureSession(t.Context(), db.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return "s"
}
