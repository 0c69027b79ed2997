package tests

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// A process at its open-file limit is told so — "too many open files" —
// never that the database cannot be written and needs its permissions
// fixed. The CLI runs under prlimit with limits from barely enough for the
// Go runtime upwards; every limit at which it fails must name the cause,
// and verify must say it could not check (exit 2), never corrupt.
func TestCLI_TooManyOpenFiles(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		if needs.InCI() {
			t.Fatal("prlimit (util-linux) is needed in CI")
		}
		t.Skip("needs prlimit (util-linux) to lower RLIMIT_NOFILE for a child process")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	if r := cli(t, nil, "", "--db", path, "session", "new", "--id", "s1"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// The floor is the lowest limit at which the CLI starts at all (the
	// Go runtime's own descriptors: stdio, the cgroup files it keeps open,
	// its poller); below it the runtime dies before sessiondb runs. At or
	// above it a runtime dump ("fatal error: runtime: eventfd failed", the
	// poller made lazily inside an open that took the last descriptor) is
	// a failure: it happened at 7 on this machine before the CLI started
	// its poller first (issue 38).
	floor := 0
	for n := 3; n <= 16 && floor == 0; n++ {
		if exec.Command(prlimit, "--nofile="+strconv.Itoa(n), cliPath, "--help").Run() == nil {
			floor = n
		}
	}
	if floor == 0 || floor > 7 {
		t.Fatalf("the CLI does not start below %d descriptors (0: not at all): the runtime needs more than this test expects", floor)
	}
	failed := 0
	for n := floor; n <= 16; n++ {
		for _, args := range [][]string{{"sessions"}, {"append", "s1", "--role", "user", "--content", "x"}, {"verify"}} {
			cmd := exec.Command(prlimit, append([]string{"--nofile=" + strconv.Itoa(n), cliPath, "--db", path}, args...)...)
			out, err := cmd.CombinedOutput()
			if err == nil {
				continue
			}
			failed++
			msg := string(out)
			if strings.Contains(msg, "fatal error: runtime:") {
				t.Errorf("%v with %d descriptors (the CLI starts with %d): a Go runtime dump, want an error saying too many open files\n%.600s", args, n, floor, msg)
				continue
			}
			if !strings.Contains(msg, "too many open files") || strings.Contains(msg, "permissions") || strings.Contains(msg, "corrupt") {
				t.Errorf("%v with %d descriptors: %v\n%s\nwant it to say too many open files", args, n, err, msg)
			}
			if args[0] == "verify" {
				if code := cmd.ProcessState.ExitCode(); code != 2 {
					t.Errorf("verify with %d descriptors: exit %d, want 2 (could not check)", n, code)
				}
			}
		}
	}
	if failed == 0 {
		t.Fatal("no descriptor limit made a command fail: the test proves nothing")
	}
	t.Logf("%d commands failed for want of descriptors, each saying so", failed)
}
