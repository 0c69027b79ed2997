package tests

import (
	"bufio"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// hermesWriterScript plays the Hermes process: Python's own sqlite3 opens
// the state.db, stops checkpointing, writes a new turn and a new session,
// says "ready" and keeps the connection — and so its WAL — open until its
// standard input closes.
const hermesWriterScript = `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA wal_autocheckpoint = 0")
c.execute("BEGIN IMMEDIATE")
c.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('cli-20261102-b1', 'assistant', 'Stage 3 spends most of its time in gzip.', 1796114500.5)")
c.execute("INSERT INTO sessions (id, source, started_at, user_id) VALUES ('tg-new-1', 'telegram', 1796114600.0, '778899')")
c.execute("INSERT INTO messages (session_id, role, content, timestamp, platform_message_id) VALUES ('tg-new-1', 'user', '新的一周', 1796114600.1, '6001')")
c.execute("COMMIT")
print("ready", flush=True)
sys.stdin.read()
c.close()
`

func hermesFixtureCopy(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "shared", "fixtures", "hermes")
	if fx := os.Getenv("SESSIONDB_HERMES_FIXTURE"); fx != "" {
		src = fx
	}
	if _, err := os.Stat(filepath.Join(src, "state.db")); err != nil {
		if needs.InCI() {
			t.Fatalf("Hermes fixture missing at %s: %v", src, err)
		}
		t.Skipf("Hermes fixture not found at %s (%v): run beside shared/ or set SESSIONDB_HERMES_FIXTURE", src, err)
	}
	dir := t.TempDir()
	for _, n := range []string{"state.db", "state.db-wal", "state.db-shm"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "state.db")
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestCLI_ImportHermesWhileInUse: `sessiondb import --from hermes` on a
// state.db a live Python process holds open with uncheckpointed writes in
// its WAL: the import sees those writes, the database file and the WAL are
// byte-identical afterwards, and the second run imports nothing.
func TestCLI_ImportHermesWhileInUse(t *testing.T) {
	src := hermesFixtureCopy(t)
	cmd := exec.Command(python(t), "-c", hermesWriterScript, src)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("the Hermes process did not start: %q %v %s", line, err, stderr.String())
	}
	fi, err := os.Stat(src + "-wal")
	if err != nil || fi.Size() == 0 {
		t.Fatalf("the Hermes writes should be in the WAL: %v %v", fi, err)
	}
	dbSum, walSum := sum(t, src), sum(t, src+"-wal")

	store := filepath.Join(t.TempDir(), "state.db")
	r := cli(t, nil, "", "--db", store, "import", "--from", "hermes", src)
	if r.code != 0 || !strings.Contains(r.stdout, "8 new sessions") || !strings.Contains(r.stdout, "31 messages") {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, nil, "", "--db", store, "import", "--from", "hermes", src)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "nothing new") {
		t.Fatalf("second import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if sum(t, src) != dbSum || sum(t, src+"-wal") != walSum {
		t.Errorf("the import changed the Hermes database or its WAL while Hermes had it open")
	}
	r = cli(t, nil, "", "--db", store, "messages", "tg-new-1")
	if r.code != 0 || !strings.Contains(r.stdout, "新的一周") {
		t.Errorf("the row from the WAL was not imported: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
