package tests

import (
	"bufio"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// TestVacuum_RefusedWhileAnotherProcessHasTheDatabaseOpen: a VACUUM holds
// the write lock for as long as it runs, so it waits for a moment when no
// one else — here Python's sqlite3, merely connected — has the file open.
func TestVacuum_RefusedWhileAnotherProcessHasTheDatabaseOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "a", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python(t), "-c", `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("SELECT COUNT(*) FROM sessions").fetchone()
print("open", flush=True)
sys.stdin.read()
`, path)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "open" {
		t.Fatalf("python did not open the database: %q %v", line, err)
	}
	_, err := s.Vacuum(ctx)
	if !errors.Is(err, db.ErrLocked) || !strings.Contains(err.Error(), "python") {
		t.Errorf("vacuum while python has the file open: %v, want ErrLocked naming python", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Vacuum(ctx); err != nil {
		t.Errorf("vacuum once python is gone: %v", err)
	}
}
