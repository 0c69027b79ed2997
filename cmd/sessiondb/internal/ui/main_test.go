package ui

import (
	"os"
	"testing"
)

var testDir string

// TestMain keeps the shared store's directory for the whole run and
// removes it after.
func TestMain(m *testing.M) {
	code := m.Run()
	if seeded.db != nil {
		seeded.db.Close()
	}
	if testDir != "" {
		os.RemoveAll(testDir)
	}
	os.Exit(code)
}

func tempDir() (string, error) {
	d, err := os.MkdirTemp("", "sessiondb-ui-")
	testDir = d
	return d, err
}
