package tests

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// python returns the interpreter: these contracts are checked against a
// peer nobody here wrote. Without it the test skips locally and fails in CI.
func python(t *testing.T) string {
	t.Helper()
	return needs.Program(t, "python3", "python3")
}

// holdScript holds SQLite's write lock with Python's own sqlite3 module,
// exactly as the store we succeed did in its seed-003 tests.
const holdScript = `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=1.0, isolation_level=None)
c.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")
c.close()
`

// holdWriteLock starts a Python process that holds the write lock on path
// for hold, and returns once the lock is held. wait reaps the process.
func holdWriteLock(t *testing.T, path string, hold time.Duration) (pid int, wait func() error) {
	t.Helper()
	cmd := exec.Command(python(t), "-c", holdScript, path, strconv.FormatFloat(hold.Seconds(), 'f', 3, 64))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("python lock holder did not start: %q %v %s", line, err, stderr.String())
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var result error
	waited := false
	wait = func() error {
		if !waited {
			result, waited = <-done, true
		}
		return result
	}
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill()
			wait()
		}
	})
	return cmd.Process.Pid, wait
}

// runPython runs a script with arguments and returns its standard output.
func runPython(t *testing.T, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command(python(t), append([]string{"-c", script}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	return string(out)
}
