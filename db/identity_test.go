package db

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite_ReplacedFileHaltsWrites(t *testing.T) {
	tests := []struct {
		name    string
		replace func(t *testing.T, path, other string)
	}{
		{"RenamedOver", func(t *testing.T, path, other string) {
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"CopiedOverInPlace", func(t *testing.T, path, other string) {
			b, err := os.ReadFile(other)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil { // same inode
				t.Fatal(err)
			}
		}},
		{"Deleted", func(t *testing.T, path, other string) {
			os.Remove(path)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTestStore(t, Options{})
			ctx := t.Context()
			newTestSession(t, s, "s1")
			other := filledStore(t) // another sessiondb file, another generation
			tt.replace(t, s.Path(), other)
			replacement, _ := os.ReadFile(s.Path())

			_, err := s.AppendMessage(ctx, "s1", NewMessage{Role: RoleUser, Content: "into the void?"})
			if !errors.Is(err, ErrReplaced) {
				t.Fatalf("append after the replacement = %v, want ErrReplaced", err)
			}
			if err := s.SetMeta(ctx, "k", "v"); !errors.Is(err, ErrReplaced) {
				t.Errorf("a later write = %v, want the sticky ErrReplaced", err)
			}
			s.Close()
			if after, _ := os.ReadFile(s.Path()); !bytes.Equal(after, replacement) {
				t.Error("the store wrote into (or checkpointed over) the replacement file")
			}
			// This store's WAL was moved away from the new file, not left to
			// be replayed into it.
			if retired, _ := filepath.Glob(s.Path() + ".retired-*.bak-wal"); len(retired) != 1 {
				t.Errorf("retired WALs %v, want one", retired)
			}
			// The replacement is itself a sound database: Verify says so and
			// Repair leaves it alone; the halted store was the one to stop.
			if tt.name != "Deleted" {
				v, _ := Verify(t.Context(), s.Path())
				r, err := Repair(t.Context(), s.Path(), RepairOptions{Logger: testLogger(new(bytes.Buffer))})
				if v.Health != HealthVerified || err != nil || r.Strategy != "none" {
					t.Errorf("replacement: verify %s, repair %q %v", v.Health, r.Strategy, err)
				}
			}
		})
	}
}

// A file copied over while the store sits idle (same inode, another
// generation) must not receive the old WAL at Close: its checkpoint would
// write one file's pages into another.
func TestClose_DoesNotCheckpointIntoAFileCopiedOverWhileIdle(t *testing.T) {
	s := openTestStore(t, Options{Logger: testLogger(new(bytes.Buffer))})
	for i := range 20 {
		newTestSession(t, s, string(rune('a'+i)))
	}
	b, _ := os.ReadFile(filledStore(t))
	if err := os.WriteFile(s.Path(), b, 0o600); err != nil { // same inode
		t.Fatal(err)
	}
	s.Close()
	if after, _ := os.ReadFile(s.Path()); !bytes.Equal(after, b) {
		t.Error("Close wrote into the replacement file")
	}
	if v, _ := Verify(t.Context(), s.Path()); v.Health != HealthVerified {
		t.Errorf("replacement after Close: %s %v", v.Health, v.Details)
	}
}
