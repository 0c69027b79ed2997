package forensics

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadHeader tells the states a database file's first bytes can be in.
func TestReadHeader(t *testing.T) {
	full := append(bytes.Clone(SQLiteHeader), make([]byte, 100-len(SQLiteHeader))...)
	for _, tc := range []struct {
		name    string
		content []byte
		want    HeaderState
		why     string
	}{
		{"sqlite", full, HeaderSQLite, ""},
		{"empty", nil, HeaderEmpty, "empty"},
		{"zeroed", make([]byte, 4096), HeaderZeroed, "zeroed"},
		{"truncated", full[:40], HeaderTruncated, "only 40 bytes"},
		{"text", []byte("root:x:0:0:root:/root:/bin/bash\n"), HeaderForeign, "not a SQLite database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			if err := os.WriteFile(path, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			got, why, err := ReadHeader(path)
			if err != nil || got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("ReadHeader = %v, %q, %v; want %v, %q", got, why, err, tc.want, tc.why)
			}
		})
	}
	if _, _, err := ReadHeader(filepath.Join(t.TempDir(), "absent")); !os.IsNotExist(err) {
		t.Errorf("absent file: err = %v, want not-exist", err)
	}
}

// MoveAside keeps every byte: the file and its sidecars are renamed,
// never deleted, and a second move the same second does not overwrite
// the first.
func TestMoveAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	var moved []string
	for i := range 2 {
		for _, p := range []string{path, path + "-wal"} {
			if err := os.WriteFile(p, []byte{byte(i)}, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		dst, err := MoveAside(path, "zeroed")
		if err != nil {
			t.Fatal(err)
		}
		moved = append(moved, dst)
		for _, p := range []string{dst, dst + "-wal"} {
			if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, []byte{byte(i)}) {
				t.Errorf("move %d: %s = %v, %v", i, p, b, err)
			}
		}
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("move %d: the path still holds a file", i)
		}
	}
	if moved[0] == moved[1] || !strings.Contains(moved[0], ".zeroed-") || !strings.HasSuffix(moved[1], ".bak") {
		t.Errorf("moved to %q", moved)
	}
}

// AppendingTo names the generation only when the wal-index is whole and
// holds frames not yet copied back.
func TestAppendingTo(t *testing.T) {
	index := func(mxFrame, nBackfill uint32, torn bool) []byte {
		b := make([]byte, walIndexNBackfill+4)
		h := b[:walIndexHeaderBytes]
		h[walIndexIsInit] = 1
		binary.LittleEndian.PutUint32(h[walIndexMxFrame:], mxFrame)
		copy(h[walIndexSalts:], "saltsalt")
		copy(b[walIndexHeaderBytes:], h)
		if torn {
			b[walIndexHeaderBytes+walIndexMxFrame]++
		}
		binary.LittleEndian.PutUint32(b[walIndexNBackfill:], nBackfill)
		return b
	}
	for _, tc := range []struct {
		name   string
		shm    []byte
		salts  string
		wantOK bool
	}{
		{"appending", index(10, 4, false), "saltsalt", true},
		{"all backfilled", index(10, 10, false), "", false},
		{"torn", index(10, 4, true), "", false},
		{"uninitialised", make([]byte, walIndexNBackfill+4), "", false},
		{"short", []byte{1, 2, 3}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db-shm")
			if err := os.WriteFile(path, tc.shm, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if salts, ok := AppendingTo(f); salts != tc.salts || ok != tc.wantOK {
				t.Errorf("AppendingTo = %q, %v; want %q, %v", salts, ok, tc.salts, tc.wantOK)
			}
		})
	}
}
