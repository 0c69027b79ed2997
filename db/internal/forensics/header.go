// Package forensics reads a SQLite database's files without SQLite — the
// header, the WAL and the wal-index in the -shm — and moves what must never
// meet SQLite aside (a torn file, another copy's WAL), never deleting
// anything. It runs before SQLite first reads a file (Open, Verify,
// Repair) and beside the writer (the WAL stamp), and opens no connection:
// package db's durable.go opens those.
package forensics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// HeaderState is what the first 100 bytes of a database file say.
type HeaderState int

const (
	HeaderSQLite    HeaderState = iota // a SQLite database header
	HeaderEmpty                        // a zero-length file
	HeaderZeroed                       // zero bytes where the header should be
	HeaderTruncated                    // a SQLite header cut short
	HeaderForeign                      // something else: maybe not ours
)

// SQLiteHeader opens every SQLite database file.
var SQLiteHeader = []byte("SQLite format 3\x00")

// ReadHeader inspects the file's first bytes without SQLite. It opens and
// closes its own descriptor, so it is only called before this process
// connects to the file (or, by Verify, on a file this process has not
// opened): closing a descriptor can drop the process's POSIX locks on it.
func ReadHeader(path string) (HeaderState, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	head := make([]byte, 100)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, "", err
	}
	head = head[:n]
	switch {
	case n == 0:
		return HeaderEmpty, "empty: zero bytes", nil
	case bytes.HasPrefix(head, SQLiteHeader) && n == 100:
		return HeaderSQLite, "", nil
	case len(bytes.Trim(head, "\x00")) == 0:
		return HeaderZeroed, "zeroed: the header is all zero bytes", nil
	case bytes.HasPrefix(head, SQLiteHeader):
		return HeaderTruncated, fmt.Sprintf("truncated: only %d bytes", n), nil
	}
	return HeaderForeign, fmt.Sprintf("not a SQLite database: the header is %q", head[:min(n, 16)]), nil
}

// Sidecars are the files SQLite keeps beside a database; they belong to
// it and travel with it.
var Sidecars = []string{"-wal", "-shm", "-journal"}

// MoveAside renames a damaged database and its sidecars to
// <name>.<kind>-<UTC time>-<pid>.bak (and .bak-wal, .bak-shm,
// .bak-journal), never deleting anything, and returns the new main path.
func MoveAside(path, kind string) (string, error) {
	base := fmt.Sprintf("%s.%s-%s-%d", path, kind, time.Now().UTC().Format("20060102T150405Z"), os.Getpid())
	dst := base + ".bak"
	for i := 1; fileExists(dst); i++ {
		dst = fmt.Sprintf("%s-%d.bak", base, i)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("move %s aside: %w", path, err)
	}
	for _, side := range Sidecars {
		if fileExists(path + side) {
			if err := os.Rename(path+side, dst+side); err != nil {
				return dst, fmt.Errorf("move %s aside: %w", path+side, err)
			}
		}
	}
	return dst, nil
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
