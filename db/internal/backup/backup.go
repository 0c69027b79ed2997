// Package backup keeps the files Repair makes beside a database before it
// changes anything: content hashes of a database with its WAL, synced
// copies, at most MaxKept backups per database, and the ledger that stops
// a repair failing on the same file for ever. Every file it opens goes
// through SideFiles, so nothing planted at a side file's path (a symbolic
// link, a FIFO) can redirect or block it; package db's implementation
// gives those refusals their public type.
package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/sessiondb/sessiondb/internal/fsx"
)

// MaxKept is how many repair backups are kept per database.
const MaxKept = 3

// MaxFailedRepairs is how many failed repairs of the same damaged file
// the ledger allows before it refuses (RepairOptions.Force overrides).
const MaxFailedRepairs = 3

// SideFiles opens, reads and writes the files kept beside a database,
// refusing anything but a regular file at their paths.
type SideFiles interface {
	Open(path string, flag int, perm fs.FileMode) (*os.File, error)
	Read(path string) ([]byte, error)
	Write(path string, b []byte) error
}

// Hash hashes a database with its WAL: the same main file with newer
// commits in its WAL is different content.
func Hash(files SideFiles, path string) (string, error) {
	h := sha256.New()
	for _, p := range []string{path, path + "-wal"} {
		f, err := files.Open(p, os.O_RDONLY, 0)
		if errors.Is(err, fs.ErrNotExist) && p != path {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// SyncDir makes a rename in dir durable (best effort; not on Windows).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// CopyFile copies src to dst (0600) and fsyncs it. Neither may be a
// symlink or other non-regular file (SideFiles).
func CopyFile(files SideFiles, src, dst string) error {
	in, err := files.Open(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := files.Open(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// CopyDatabase copies a database and its WAL (when present).
func CopyDatabase(files SideFiles, src, dst string) error {
	if err := CopyFile(files, src, dst); err != nil {
		return err
	}
	os.Remove(dst + "-wal")
	os.Remove(dst + "-shm")
	if _, err := os.Stat(src + "-wal"); err == nil {
		return CopyFile(files, src+"-wal", dst+"-wal")
	}
	return nil
}

// ForRepair copies the database (and its WAL) before any surgery, as
// <path>.repair-<UTC time>-<pid>.bak. A backup with the same content is
// reused instead of copied again; at most MaxKept are kept (the
// oldest go); the copy is refused when the disk lacks room for it twice
// over, so a backup never fills the disk the repair needs.
func ForRepair(files SideFiles, path, hash string) (string, error) {
	existing, _ := filepath.Glob(path + ".repair-*.bak")
	sort.Strings(existing) // names sort by time
	for _, b := range existing {
		if h, err := Hash(files, b); err == nil && h == hash {
			return b, nil
		}
	}
	need := fileSize(path) + fileSize(path+"-wal")
	if free, ok := fsx.FreeSpace(filepath.Dir(path)); ok && free < 2*need {
		return "", fmt.Errorf("not enough free space for a backup: %d bytes free, %d needed", free, 2*need)
	}
	dst := fmt.Sprintf("%s.repair-%s-%d.bak", path, time.Now().UTC().Format("20060102T150405.000Z"), os.Getpid())
	if err := CopyDatabase(files, path, dst); err != nil {
		os.Remove(dst)
		os.Remove(dst + "-wal")
		return "", fmt.Errorf("back up %s: %w", path, err)
	}
	SyncDir(filepath.Dir(dst))
	existing = append(existing, dst)
	for len(existing) > MaxKept {
		os.Remove(existing[0])
		os.Remove(existing[0] + "-wal")
		existing = existing[1:]
	}
	return dst, nil
}

// Ledger counts failed repairs per damaged file content, in
// <path>.repair-attempts.json, so a repair that cannot work is not retried
// forever (each try costs a backup and minutes of I/O).
type Ledger struct {
	files    SideFiles
	path     string
	Failures map[string]int `json:"failures"` // content hash → failed attempts
}

// LoadLedger reads the ledger of the database at dbPath (empty when it has
// none).
func LoadLedger(files SideFiles, dbPath string) (*Ledger, error) {
	l := &Ledger{files: files, path: dbPath + ".repair-attempts.json", Failures: map[string]int{}}
	b, err := files.Read(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, l); err != nil {
		return nil, fmt.Errorf("read %s: %w (delete it to reset the repair ledger)", l.path, err)
	}
	if l.Failures == nil {
		l.Failures = map[string]int{}
	}
	return l, nil
}

// Save writes the ledger, or removes it when it counts no failure.
func (l *Ledger) Save() error {
	if len(l.Failures) == 0 {
		err := os.Remove(l.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	// rename replaces whatever stands at l.path (a symlink itself, never
	// its target); the temporary file is written through SideFiles.
	tmp := l.path + ".tmp"
	if err := l.files.Write(tmp, b); err != nil {
		return err
	}
	return os.Rename(tmp, l.path)
}

// Refusal explains why the ledger refuses another attempt on the content
// hash names, or nil.
func (l *Ledger) Refusal(hash string) error {
	if n := l.Failures[hash]; n >= MaxFailedRepairs {
		return fmt.Errorf("automatic repair has already failed %d times on this exact file; restore a backup, export what is readable, or delete %s (or pass --force) to try again",
			n, l.path)
	}
	return nil
}

// fileSize is the size of the file at path (0 when there is none).
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
