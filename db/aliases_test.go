package db

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A hard link gives the file a second name, hence a second WAL: Open,
// Verify and Repair refuse it through either name, and say why.
func TestOpen_RefusesHardLinkedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "a")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "other.db")
	if err := os.Link(path, link); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}
	for _, p := range []string{path, link} {
		calls := map[string]error{}
		_, calls["Open"] = Open(t.Context(), p, Options{})
		_, calls["Verify"] = Verify(t.Context(), p)
		_, calls["Repair"] = Repair(t.Context(), p, RepairOptions{})
		for name, err := range calls {
			var ae *AliasedFileError
			if !errors.Is(err, ErrAliased) || !errors.As(err, &ae) || ae.Links != 2 {
				t.Fatalf("%s(%s) = %v, want an AliasedFileError with 2 links", name, p, err)
			}
			for _, want := range []string{p, "2 hard links", "-wal", "corrupt"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s error %q does not say %q", name, err, want)
				}
			}
		}
	}
	if _, err := os.Stat(link + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused open left a WAL beside the second name: %v", err)
	}
	// Once the second name is gone the file opens again, data intact.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatalf("Open after removing the link: %v", err)
	}
	defer s.Close()
	if _, err := s.Session(t.Context(), "a"); err != nil {
		t.Fatalf("session lost: %v", err)
	}
}
