//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A 0400 database is read by the read commands and refused by the write
// ones, and stays 0400.
func TestReadOnlyModeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if code, _, errOut := runCLI(t, path, "session", "new", "--id", "a", "--source", "test"); code != 0 {
		t.Fatalf("session new: %s", errOut)
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, path, "sessions"); code != 0 || !strings.Contains(out, "a") {
		t.Fatalf("sessions on a 0400 file: exit %d, %q %q", code, out, errOut)
	}
	code, _, errOut := runCLI(t, path, "append", "a", "--role", "user", "--content", "x")
	if code != exitError || !strings.Contains(errOut, "read-only") || !strings.Contains(errOut, "0400") {
		t.Fatalf("append to a 0400 file: exit %d, %q; want exit 1 saying it is read-only", code, errOut)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o400 {
		t.Fatalf("mode %v, want 0400 kept", fi.Mode().Perm())
	}
}
