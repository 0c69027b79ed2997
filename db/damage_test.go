package db

import (
	"bytes"
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
