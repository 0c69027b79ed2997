package tests

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/internal/needs"
)

// A file bind mount (docker -v host/state.db:/data/state.db) has one link
// but two names, so two WALs. While another process has the database open
// through the bind-mounted name, Open, Verify and the CLI's read commands
// on the original name refuse it and name that process; once it is gone
// the file opens, with what the other process wrote.
func TestOpen_RefusesFileOpenElsewhereUnderAnotherName(t *testing.T) {
	if os.Geteuid() != 0 {
		needPrivilege(t, "root to bind-mount a file")
	}
	original := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, original, db.Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mounted := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(mounted, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", original, mounted).CombinedOutput(); err != nil {
		if needs.InCI() {
			t.Fatalf("mount --bind: %v\n%s", err, out)
		}
		t.Skipf("mount --bind refused (%v: %s); run as root on a host that allows mounts", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mounted).Run() })

	hold := helper(t, "hold", mounted)
	stdin, err := hold.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := hold.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hold.Stderr = os.Stderr
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	defer hold.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("holder did not get ready: %q, %v", line, err)
	}

	pid := hold.Process.Pid
	_, openErr := db.Open(t.Context(), original, db.Options{})
	_, verifyErr := db.Verify(t.Context(), original)
	for name, err := range map[string]error{"Open": openErr, "Verify": verifyErr} {
		var ae *db.AliasedFileError
		if !errors.As(err, &ae) || !errors.Is(err, db.ErrAliased) || ae.PID != pid || ae.Other != mounted {
			t.Fatalf("%s while pid %d holds %s: %v, want an AliasedFileError naming both", name, pid, mounted, err)
		}
		for _, want := range []string{mounted, "pid " + strconv.Itoa(pid), "-wal", "corrupt"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s error %q does not say %q", name, err, want)
			}
		}
	}
	out, err := exec.Command(cliPath, "--db", original, "sessions").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "pid "+strconv.Itoa(pid)) {
		t.Errorf("sessiondb sessions while the file is open elsewhere: %v\n%s", err, out)
	}
	if _, err := os.Stat(original + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused open left a WAL beside %s: %v", original, err)
	}

	stdin.Close()
	if err := hold.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	s = openStore(t, original, db.Options{})
	if _, err := s.Session(t.Context(), "held"); err != nil {
		t.Fatalf("the holder's session is not visible through %s: %v", original, err)
	}
}
