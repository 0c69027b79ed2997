package db

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen_TornFiles(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T) string // returns the path
		movedAs string                    // the .bak kind, or "" when nothing moves
	}{
		{"ZeroedHeader", func(t *testing.T) string {
			p := filledStore(t)
			fi, _ := os.Stat(p)
			os.WriteFile(p, make([]byte, fi.Size()), 0o600)
			return p
		}, "zeroed"},
		{"EmptyBesideWAL", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "state.db")
			os.WriteFile(p, nil, 0o600)
			os.WriteFile(p+"-wal", []byte("frames that belong to a lost main file"), 0o600)
			return p
		}, "emptied"},
		{"EmptyAlone", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "state.db")
			os.WriteFile(p, nil, 0o600)
			return p
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t)
			before, _ := os.ReadFile(path)
			var logs bytes.Buffer
			s, err := Open(t.Context(), path, Options{Logger: testLogger(&logs)})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			newTestSession(t, s, "fresh") // a fresh, working database
			baks, _ := filepath.Glob(path + ".*.bak")
			if tt.movedAs == "" {
				if len(baks) != 0 {
					t.Errorf("moved aside %v, want nothing moved", baks)
				}
				return
			}
			if len(baks) != 1 || !strings.Contains(baks[0], "."+tt.movedAs+"-") || !strings.HasSuffix(baks[0], fmt.Sprintf("-%d.bak", os.Getpid())) {
				t.Fatalf("backups %v, want one %s-<time>-<pid>.bak", baks, tt.movedAs)
			}
			if got, _ := os.ReadFile(baks[0]); !bytes.Equal(got, before) {
				t.Error("the moved-aside file is not the original bytes")
			}
			if tt.movedAs == "emptied" {
				if _, err := os.Stat(baks[0] + "-wal"); err != nil {
					t.Errorf("the WAL did not move with its main file: %v", err)
				}
			}
			if !strings.Contains(logs.String(), "moved aside") || !strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("the move was not logged loudly: %q", logs.String())
			}
		})
	}
}

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

func TestWrite_StructuralDamageHaltsWrites(t *testing.T) {
	path := filledStore(t)
	// Overwrite the messages table's root page with garbage, as a torn
	// write would.
	var root int64
	d, err := openDB(path, kindProbe, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = 'messages'").Scan(&root); err != nil {
		t.Fatal(err)
	}
	d.Close()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(bytes.Repeat([]byte{0xA5}, 4096), (root-1)*4096)
	f.Close()

	s, err := Open(t.Context(), path, Options{Logger: testLogger(new(bytes.Buffer))})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	_, err = s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: "x"})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("append on a damaged table = %v, want ErrCorrupt", err)
	}
	if err := s.SetMeta(t.Context(), "k", "v"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a later write elsewhere = %v, want the sticky ErrCorrupt", err)
	}
}

func TestWrite_FTSDamageKeepsWritesGoing(t *testing.T) {
	path := filledStore(t)
	// The structure record (id 10) too: indexing reads it on every insert,
	// while the segments (above 10) are read only by a merge that may or
	// may not come.
	damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id >= 10")
	var logs bytes.Buffer
	s, err := Open(t.Context(), path, Options{FTSMergeEvery: 1, Logger: testLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: fmt.Sprint("zanzibar ", i)}); err != nil {
			t.Fatalf("append %d with a damaged index: %v", i, err)
		}
	}
	// The appends do not touch the index; the indexer meets the damage.
	if err := s.IndexNow(t.Context()); err != nil {
		t.Fatalf("IndexNow with a damaged index: %v", err)
	}
	if _, err := s.Meta(t.Context(), metaFTSStale); err != nil {
		t.Errorf("the index was not marked stale: %v", err)
	}
	if !strings.Contains(logs.String(), "full-text index is damaged") {
		t.Errorf("the damage was not logged: %q", logs.String())
	}
	s.Close()

	// The next open rebuilds the index: the file verifies and the messages
	// written while it was off are found.
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Meta(t.Context(), metaFTSStale); !errors.Is(err, ErrNotFound) {
		t.Errorf("stale mark after the rebuild: %v", err)
	}
	var hits int64
	err = s.read(t.Context(), "probe", "", func(q genDBTX) error {
		var err error
		hits, err = queries.FTSProbe(context.Background(), q, "zanzibar")
		return err
	})
	if err != nil || hits != 50 {
		t.Errorf("search after the rebuild: %d hits, %v; want 50", hits, err)
	}
	if r, _ := Verify(t.Context(), path); r.Health != HealthVerified {
		t.Errorf("verify after the rebuild: %s %v", r.Health, r.Details)
	}
}

// Review regression: a file copied over while the store sits idle must not
// receive the old WAL at Close.
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
