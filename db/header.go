package db

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// headerState is what the first 100 bytes of a database file say.
type headerState int

const (
	headerSQLite    headerState = iota // a SQLite database header
	headerEmpty                        // a zero-length file
	headerZeroed                       // zero bytes where the header should be
	headerTruncated                    // a SQLite header cut short
	headerForeign                      // something else: maybe not ours
)

// sqliteHeader opens every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// readHeader inspects the file's first bytes without SQLite. It opens and
// closes its own descriptor, so it is only called before this process
// connects to the file (or, by Verify, on a file this process has not
// opened): closing a descriptor can drop the process's POSIX locks on it.
func readHeader(path string) (headerState, string, error) {
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
		return headerEmpty, "empty: zero bytes", nil
	case bytes.HasPrefix(head, sqliteHeader) && n == 100:
		return headerSQLite, "", nil
	case len(bytes.Trim(head, "\x00")) == 0:
		return headerZeroed, "zeroed: the header is all zero bytes", nil
	case bytes.HasPrefix(head, sqliteHeader):
		return headerTruncated, fmt.Sprintf("truncated: only %d bytes", n), nil
	}
	return headerForeign, fmt.Sprintf("not a SQLite database: the header is %q", head[:min(n, 16)]), nil
}

// sidecars are the files SQLite keeps beside a database; they belong to
// it and travel with it.
var sidecars = []string{"-wal", "-shm", "-journal"}

// moveAside renames a damaged database and its sidecars to
// <name>.<kind>-<UTC time>-<pid>.bak (and .bak-wal, .bak-shm,
// .bak-journal), never deleting anything, and returns the new main path.
func moveAside(path, kind string) (string, error) {
	base := fmt.Sprintf("%s.%s-%s-%d", path, kind, time.Now().UTC().Format("20060102T150405Z"), os.Getpid())
	dst := base + ".bak"
	for i := 1; fileExists(dst); i++ {
		dst = fmt.Sprintf("%s-%d.bak", base, i)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("move %s aside: %w", path, err)
	}
	for _, side := range sidecars {
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
