package tests

import (
	"os"
	"testing"
)

// needPrivilege skips a test that needs root (mounts, setpriv) with a
// message saying how to run it, and fails it under CI=true, where the
// privilege is always there.
func needPrivilege(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s is unavailable", what)
	}
	t.Skipf("needs %s: run the tests as root (CI does)", what)
}
