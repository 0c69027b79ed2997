package bench

import (
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// The baseline is only a ceiling if it pays for the same durability as
// the store's writer: its connection must run with the writer's pragmas,
// and the loader's must be unable to write.
func TestRawConnections_HaveTheStoresPragmas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := db.Open(t.Context(), path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ra, err := newRawAppender(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer ra.close()
	for pragma, want := range map[string]string{
		"synchronous": "2", "foreign_keys": "1", "busy_timeout": "5000",
		"journal_mode": "wal", "journal_size_limit": "67108864",
	} {
		var got string
		if err := ra.c.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
			t.Errorf("writer PRAGMA %s = %q, %v; want %q", pragma, got, err, want)
		}
	}
	loader, err := openRawLoader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer loader.Close()
	if _, err := loader.ExecContext(t.Context(), "DELETE FROM sessions"); err == nil {
		t.Error("the raw loader could write")
	}
}
