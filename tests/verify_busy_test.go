package tests

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// Verify says "busy", not "corrupt", when another process's exclusive lock
// keeps integrity_check from running (a store switched to the rollback
// journal, in the middle of a write, held by Python's sqlite3), and the
// CLI exits 2. (It used a database of Python's own, which is not a store:
// since issue 38 that is "not a store", exit 4, whatever its locks.)
func TestVerify_BusyWhileAnotherProcessHoldsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := db.Open(t.Context(), path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	cmd := exec.Command(python(t), "-c", `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA journal_mode=DELETE")
c.execute("BEGIN EXCLUSIVE")
c.execute("CREATE TABLE t (x)")
c.execute("INSERT INTO t VALUES (1)")
print("locked", flush=True)
time.sleep(5)
c.execute("COMMIT")
`, path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "locked" {
		t.Fatalf("holder did not start: %q", line)
	}
	r, err := db.Verify(t.Context(), path)
	if err != nil || r.Health != db.HealthBusy {
		t.Errorf("Verify under an exclusive lock = %s %v %v, want busy", r.Health, r.Details, err)
	}
	// A lock is not damage: the CLI says it could not check (exit 2).
	if r := cli(t, nil, "", "--db", path, "verify"); r.code != 2 || !strings.Contains(r.stderr, "could not check") {
		t.Errorf("sessiondb verify under an exclusive lock: exit %d %q, want 2 and \"could not check\"", r.code, r.stderr)
	}
}
