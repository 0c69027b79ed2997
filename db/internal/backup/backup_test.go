package backup

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/internal/sidefile"
)

// files is the side-file opener package db gives, without its public
// error type.
type files struct{}

func (files) Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return sidefile.Open(path, flag, perm)
}
func (files) Read(path string) ([]byte, error)  { return sidefile.Read(path) }
func (files) Write(path string, b []byte) error { return sidefile.Write(path, b) }

// The ledger refuses a content after MaxFailedRepairs failures, survives a
// reload, and leaves no file once it counts nothing.
func TestLedger(t *testing.T) {
	db := filepath.Join(t.TempDir(), "store.db")
	l, err := LoadLedger(files{}, db)
	if err != nil {
		t.Fatal(err)
	}
	l.Failures["h"] = MaxFailedRepairs
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	l, err = LoadLedger(files{}, db)
	if err != nil {
		t.Fatal(err)
	}
	if l.Refusal("h") == nil || l.Refusal("other") != nil {
		t.Errorf("Refusal(h) = %v, Refusal(other) = %v; want a refusal, then none", l.Refusal("h"), l.Refusal("other"))
	}
	delete(l.Failures, "h")
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(db + ".repair-attempts.json"); !os.IsNotExist(err) {
		t.Errorf("an empty ledger left its file: %v", err)
	}
}

// A backup with the content of one already kept is that one, not a copy;
// the hash covers the WAL.
func TestForRepairReusesSameContent(t *testing.T) {
	db := filepath.Join(t.TempDir(), "store.db")
	if err := os.WriteFile(db, []byte("main"), 0o600); err != nil {
		t.Fatal(err)
	}
	h1, err := Hash(files{}, db)
	if err != nil {
		t.Fatal(err)
	}
	first, err := ForRepair(files{}, db, h1)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ForRepair(files{}, db, h1); err != nil || again != first {
		t.Errorf("same content: backup %q, %v; want %q reused", again, err, first)
	}
	if err := os.WriteFile(db+"-wal", []byte("frames"), 0o600); err != nil {
		t.Fatal(err)
	}
	if h2, err := Hash(files{}, db); err != nil || h2 == h1 {
		t.Errorf("with a WAL: hash %q, %v; want it to differ from %q", h2, err, h1)
	}
}
