package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// TestTestScript_Race: the test command runs the race detector where a C
// compiler is (or can be installed); without one it runs without -race
// after a notice, except in CI, where that is an error.
func TestTestScript_Race(t *testing.T) {
	t.Run("NoCompiler", func(t *testing.T) {
		stdout, stderr, code := runTestScript(t, "CC=/nonexistent/gcc")
		if code != 0 || !strings.HasPrefix(stdout, "go test -count=1 -timeout 40m ./...\n") || !strings.Contains(stderr, "WITHOUT the race detector") {
			t.Errorf("exit %d, stdout %q, stderr %q; want the tests without -race and a notice", code, stdout, stderr)
		}
	})
	t.Run("NoCompilerInCI", func(t *testing.T) {
		stdout, stderr, code := runTestScript(t, "CC=/nonexistent/gcc", "CI=true")
		if code != 1 || stdout != "" || !strings.Contains(stderr, "CI runs the race detector") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 before any test", code, stdout, stderr)
		}
	})
	t.Run("Compiler", func(t *testing.T) {
		cc, err := exec.Command("go", "env", "CC").Output()
		if _, lookErr := exec.LookPath(strings.TrimSpace(string(cc))); err != nil || lookErr != nil {
			if needs.InCI() {
				t.Fatalf("CI has no C compiler (%s): %v %v", cc, err, lookErr)
			}
			t.Skip("no C compiler here (apt-get install gcc, or run scripts/test.sh as root)")
		}
		stdout, stderr, code := runTestScript(t)
		if code != 0 || !strings.HasPrefix(stdout, "go test -race -count=1 -timeout 40m ./...\n") || strings.Contains(stderr, "race detector") {
			t.Errorf("exit %d, stdout %q, stderr %q; want the tests with -race", code, stdout, stderr)
		}
	})
}

// TestTestScript_OnlyGo: for a user whose machine has Go and a base system
// but none of the extras (python3, sqlite3, zsh, fish, pgbouncer,
// chromium, gcc; pgbouncer lives in /usr/sbin, outside such a PATH), the test command runs the tests after a notice naming
// what is missing; under CI=true that is an error before any test.
func TestTestScript_OnlyGo(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"bash", "go", "id", "dirname", "ls", "sort", "tail"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	pathEnv := "PATH=" + bin
	t.Run("Locally", func(t *testing.T) {
		stdout, stderr, code := runTestScript(t, pathEnv, "SESSIONDB_PG_DSN=")
		if code != 0 || !strings.HasPrefix(stdout, "go test -count=1 -timeout 40m ./...\n") ||
			!strings.Contains(stderr, "NOTICE: not installed: python3 sqlite3 bsdutils zsh fish") ||
			!strings.Contains(stderr, "WITHOUT the race detector") {
			t.Errorf("exit %d, stdout %q, stderr %q; want the tests without -race after notices", code, stdout, stderr)
		}
	})
	t.Run("InCI", func(t *testing.T) {
		stdout, stderr, code := runTestScript(t, pathEnv, "SESSIONDB_PG_DSN=", "CI=true")
		if code != 1 || stdout != "" || !strings.Contains(stderr, "CI needs python3 sqlite3 bsdutils zsh fish") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 before any test", code, stdout, stderr)
		}
	})
}

func hasPath(env []string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			return true
		}
	}
	return false
}

// runTestScript runs the test command in dry-run mode, installing
// nothing, with env added to (or replacing CI, CC and PATH in) this
// process's environment.
func runTestScript(t *testing.T, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("bash", "../scripts/test.sh")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "CC=") && !(strings.HasPrefix(kv, "PATH=") && hasPath(env)) {
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
