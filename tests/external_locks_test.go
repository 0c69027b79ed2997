package tests

// External lock holders no one here wrote: Python's sqlite3 holding
// BEGIN IMMEDIATE for 15 s, and the sqlite3 shell running a VACUUM.
// sessiondb waits them out within its patience and reports ErrLocked —
// naming the holder, calling the database healthy — beyond it.

import (
	"bufio"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/internal/needs"
	"github.com/sessiondb/sessiondb/storetest"
)

// TestExternal_PythonHolds15Seconds: under a 15 s hold, an append with 2 s
// of patience gives up with ErrLocked after about 2 s; one with the default
// 60 s transcript patience waits the hold out and lands.
func TestExternal_PythonHolds15Seconds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	patient := openStore(t, path, db.Options{})
	impatient := openStore(t, path, db.Options{WritePatience: time.Second, TranscriptPatience: 2 * time.Second})
	ctx := t.Context()
	if _, err := patient.CreateSession(ctx, db.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	_, wait := holdWriteLock(t, path, 15*time.Second)
	start := time.Now()
	var wg sync.WaitGroup
	var gaveUp, landed time.Duration
	var errImpatient, errPatient error
	wg.Go(func() {
		_, errImpatient = impatient.AppendMessage(ctx, "s", db.NewMessage{Role: db.RoleUser, Content: "impatient"})
		gaveUp = time.Since(start)
	})
	wg.Go(func() {
		_, errPatient = patient.AppendMessage(ctx, "s", db.NewMessage{Role: db.RoleUser, Content: "patient"})
		landed = time.Since(start)
	})
	wg.Wait()
	if err := wait(); err != nil {
		t.Fatalf("python holder: %v", err)
	}
	if !errors.Is(errImpatient, db.ErrLocked) || !strings.Contains(errImpatient.Error(), "healthy") ||
		!strings.Contains(errImpatient.Error(), "python") {
		t.Errorf("2 s patience under a 15 s hold: %v; want ErrLocked naming python and calling the database healthy", errImpatient)
	}
	if gaveUp < 1500*time.Millisecond || gaveUp > 8*time.Second {
		t.Errorf("gave up after %v, want about 2 s", gaveUp)
	}
	if errPatient != nil || landed < 14*time.Second {
		t.Errorf("default patience: %v after %v; want success after the 15 s hold", errPatient, landed)
	}
	msgs, _ := patient.Messages(ctx, "s", db.MessageQuery{})
	if len(msgs) != 1 || msgs[0].Content != "patient" {
		t.Errorf("rows after the hold: %+v", msgs)
	}
}

// TestExternal_SQLiteShellVacuum: the sqlite3 shell VACUUMs a 100 MiB
// database (about a second of holding the write lock) while sessiondb
// appends: with its default patience every append lands, some after
// waiting; with 50 ms of patience an append gives up with ErrLocked.
func TestExternal_SQLiteShellVacuum(t *testing.T) {
	shell := needs.Program(t, "sqlite3", "sqlite3")
	path := filepath.Join(t.TempDir(), "state.db")
	patient := openStore(t, path, db.Options{})
	impatient := openStore(t, path, db.Options{WritePatience: 25 * time.Millisecond, TranscriptPatience: 50 * time.Millisecond})
	ctx := t.Context()
	if _, err := patient.CreateSession(ctx, db.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	ballast := exec.Command(shell, path, "CREATE TABLE ballast (b BLOB); "+
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100) "+
		"INSERT INTO ballast SELECT randomblob(1048576) FROM c;")
	if out, err := ballast.CombinedOutput(); err != nil {
		t.Fatalf("ballast: %v %s", err, out)
	}

	// vacuum runs the shell's VACUUM and, once it holds the write lock,
	// calls appendFn until the shell exits. (A write committed during the
	// VACUUM's first, read-only phase would end it early: the probe only
	// tries the lock and rolls back.)
	vacuum := func(appendFn func() error) (appends int, errs []error) {
		// The probe connects first, so it is polling before the VACUUM starts.
		probe := exec.Command(python(t), "-c", waitForWriteLockScript, path)
		probeOut, _ := probe.StdoutPipe()
		if err := probe.Start(); err != nil {
			t.Fatal(err)
		}
		defer probe.Wait()
		lines := bufio.NewReader(probeOut)
		if line, _ := lines.ReadString('\n'); strings.TrimSpace(line) != "ready" {
			t.Fatalf("probe: %q", line)
		}
		cmd := exec.Command(shell, path, ".timeout 30000", "VACUUM")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if line, _ := lines.ReadString('\n'); strings.TrimSpace(line) != "held" {
			t.Fatalf("the VACUUM never held the write lock: %q", line)
		}
		for {
			select {
			case err := <-exited:
				if err != nil || stderr.Len() > 0 {
					t.Fatalf("sqlite3 VACUUM: %v %s", err, stderr.String())
				}
				return appends, errs
			default:
			}
			if err := appendFn(); err != nil {
				errs = append(errs, err)
			}
			appends++
			time.Sleep(5 * time.Millisecond)
		}
	}

	var slowest time.Duration
	n, errs := vacuum(func() error {
		start := time.Now()
		_, err := patient.AppendMessage(ctx, "s", db.NewMessage{Role: db.RoleUser, Content: "during vacuum"})
		slowest = max(slowest, time.Since(start))
		return err
	})
	if len(errs) > 0 {
		t.Errorf("%d of %d appends failed during the shell's VACUUM: %v", len(errs), n, errs[0])
	}
	if msgs := storetest.WholeSession(t, patient.Store, "s"); len(msgs) != n {
		t.Errorf("%d rows after %d acknowledged appends", len(msgs), n)
	}
	if slowest < 50*time.Millisecond {
		t.Errorf("the slowest append took %v: none met the VACUUM's lock", slowest)
	}
	_, errs = vacuum(func() error {
		_, err := impatient.AppendMessage(ctx, "s", db.NewMessage{Role: db.RoleUser, Content: "impatient"})
		return err
	})
	// Every failure is ErrLocked. It names the shell — except an append
	// whose patience ran out just as the VACUUM let go, which says the
	// holder had released the lock: true, and nothing else is to be named.
	locked, named := 0, 0
	for _, err := range errs {
		switch {
		case !errors.Is(err, db.ErrLocked):
			t.Errorf("an impatient append failed with %v, want ErrLocked", err)
		case strings.Contains(err.Error(), "sqlite3"):
			named++
		case !strings.Contains(err.Error(), "no write-class lock was held at the deadline"):
			t.Errorf("an impatient append failed with %v, want ErrLocked naming the sqlite3 shell", err)
		}
		locked++
	}
	if locked == 0 {
		t.Errorf("no impatient append met the VACUUM's lock")
	}
	if runtime.GOOS == "linux" && locked > 0 && named == 0 {
		t.Errorf("none of %d impatient appends named the sqlite3 shell holding the lock: %v", locked, errs[0])
	}
	// The ballast is a table sessiondb did not create, which Verify reports
	// as damage: drop it, then the file must verify.
	if out, err := exec.Command(shell, path, ".timeout 30000", "DROP TABLE ballast").CombinedOutput(); err != nil {
		t.Fatalf("drop the ballast: %v %s", err, out)
	}
	if r, err := db.Verify(ctx, path); err != nil || r.Health != db.HealthVerified {
		t.Errorf("verify after the VACUUMs: %s %q %v", r.Health, r.Details, err)
	}
}

// waitForWriteLockScript polls (without ever committing) until another
// connection holds the write lock, then prints "held".
const waitForWriteLockScript = `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
c.execute("SELECT 1").fetchone()
print("ready", flush=True)
deadline = time.time() + 30
while time.time() < deadline:
    try:
        c.execute("BEGIN IMMEDIATE")
        c.execute("ROLLBACK")
    except sqlite3.OperationalError:
        print("held", flush=True)
        sys.exit(0)
    time.sleep(0.001)
print("never", flush=True)
`
