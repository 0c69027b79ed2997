// Package needs is how a test asks for something a machine with only Go
// may lack — a program (python3, sqlite3, zsh, fish, script), root, a
// mount, a PostgreSQL server. Where it is missing the test skips, saying
// how to run it; under CI=true, where .ci/run installs everything and runs
// as root, it fails instead, so CI never passes by skipping.
package needs

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true), where every need is
// met and a missing one is a failure.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing ends the test because what it needs is not here: a skip naming
// what is missing and how to get it, or, in CI, a failure.
func Missing(t testing.TB, what, how string) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true but %s is missing (%s)", what, how)
	}
	t.Skipf("needs %s: %s", what, how)
}

// Program returns the path of an external program the test runs, or ends
// the test through Missing. pkg is the Debian package that has it.
func Program(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, "apt-get install "+pkg+", or run `bash scripts/test.sh` as root, which installs it")
	}
	return p
}

// Root ends the test through Missing unless it runs as root; what says
// what the privilege is for (a mount, another user's file).
func Root(t testing.TB, what string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "root for "+what, "run the tests as root (CI does)")
	}
}
