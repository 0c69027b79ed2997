package tests

import (
	"testing"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// needPrivilege skips a test that needs root (mounts, setpriv) with a
// message saying how to run it, and fails it under CI=true, where the
// privilege is always there.
func needPrivilege(t *testing.T, what string) {
	t.Helper()
	needs.Missing(t, what, "run the tests as root (CI does)")
}
