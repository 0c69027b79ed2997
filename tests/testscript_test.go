package tests

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestTestScript_Race: the test command runs the race detector where a C
// compiler is (or can be installed); without one it runs without -race
// after a notice, except in CI, where that is an error.
func TestTestScript_Race(t *testing.T) {
	run := func(t *testing.T, env ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command("bash", "../scripts/test.sh")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "CC=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, append([]string{"SESSIONDB_TEST_DRY_RUN=1", "SESSIONDB_TEST_NO_INSTALL=1"}, env...)...)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}
	t.Run("NoCompiler", func(t *testing.T) {
		stdout, stderr, code := run(t, "CC=/nonexistent/gcc")
		if code != 0 || !strings.HasPrefix(stdout, "go test -count=1 -timeout 40m ./...\n") || !strings.Contains(stderr, "WITHOUT the race detector") {
			t.Errorf("exit %d, stdout %q, stderr %q; want the tests without -race and a notice", code, stdout, stderr)
		}
	})
	t.Run("NoCompilerInCI", func(t *testing.T) {
		stdout, stderr, code := run(t, "CC=/nonexistent/gcc", "CI=true")
		if code != 1 || stdout != "" || !strings.Contains(stderr, "CI runs the race detector") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 before any test", code, stdout, stderr)
		}
	})
	t.Run("Compiler", func(t *testing.T) {
		cc, err := exec.Command("go", "env", "CC").Output()
		if _, lookErr := exec.LookPath(strings.TrimSpace(string(cc))); err != nil || lookErr != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI has no C compiler (%s): %v %v", cc, err, lookErr)
			}
			t.Skip("no C compiler here (apt-get install gcc, or run scripts/test.sh as root)")
		}
		stdout, stderr, code := run(t)
		if code != 0 || !strings.HasPrefix(stdout, "go test -race -count=1 -timeout 40m ./...\n") || stderr != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want the tests with -race", code, stdout, stderr)
		}
	})
}
