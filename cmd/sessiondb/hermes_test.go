package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hermesFixture is the Hermes state.db in ../shared beside the project; the
// test skips only when it is absent, and fails instead when CI=true.
func hermesFixture(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SESSIONDB_HERMES_FIXTURE")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "fixtures", "hermes")
	}
	path := filepath.Join(dir, "state.db")
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Hermes fixture missing at %s (%v): CI must run the fixture test", path, err)
		}
		t.Skipf("Hermes fixture not found at %s (%v): run from a checkout beside shared/, or set SESSIONDB_HERMES_FIXTURE", path, err)
	}
	// Imported where it lies, a WAL file is read through its -shm, which
	// this user must be able to open for writing (nothing is written);
	// where not (a shared, root-owned fixture), the import refuses with
	// ErrReadOnly, and this test cannot run here.
	if f, err := os.OpenFile(path+"-shm", os.O_WRONLY, 0); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but the Hermes fixture's -shm is not writable by this user: %v", err)
		}
		t.Skipf("needs write access to the Hermes fixture's -shm (%v): run as its owner (CI runs as root), or point SESSIONDB_HERMES_FIXTURE at a copy you own", err)
	}
	return path
}

// TestImportHermesCommand: importing twice writes nothing the second time
// and says so, and the export afterwards is the same bytes after each run
// and from a second store fed the same file.
func TestImportHermesCommand(t *testing.T) {
	src := hermesFixture(t)
	path := filepath.Join(t.TempDir(), "state.db")
	code, out, stderr := cli(t, path, "import", "--from", "hermes", src)
	if code != exitOK || !strings.Contains(out, "7 new sessions") || !strings.Contains(out, "29 messages") {
		t.Fatalf("first import: exit %d\n%s%s", code, out, stderr)
	}
	_, export1, _ := cli(t, path, "export")
	code, out, stderr = cli(t, path, "import", "--from=hermes", src)
	if code != exitOK || !strings.HasPrefix(out, "nothing new in ") || !strings.Contains(out, "7 sessions already imported") {
		t.Fatalf("second import: exit %d\n%s%s", code, out, stderr)
	}
	_, export2, _ := cli(t, path, "export")
	if export1 != export2 || !strings.Contains(export1, "Fix the flaky build #2") {
		t.Errorf("export changed across import runs (or is empty):\n%s\n---\n%s", export1, export2)
	}
	other := filepath.Join(t.TempDir(), "state.db")
	cli(t, other, "import", "--from", "hermes", src)
	if _, export3, _ := cli(t, other, "export"); export3 != export1 {
		t.Errorf("another store importing the same file exports other bytes")
	}

	code, out, _ = cli(t, path, "--json", "import", "--from", "hermes", src)
	var res struct {
		Imported   int  `json:"imported"`
		Unchanged  int  `json:"unchanged"`
		NothingNew bool `json:"nothing_new"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK || !res.NothingNew || res.Unchanged != 7 {
		t.Errorf("--json import: exit %d, %+v, %v\n%s", code, res, err, out)
	}
	if code, _, stderr := cli(t, path, "import", "--from", "postgres", src); code != exitUsage {
		t.Errorf("unknown --from: exit %d (%s), want usage", code, stderr)
	}
}
