package db

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

// maxRepairBackups is how many repair backups are kept per database.
const maxRepairBackups = 3

// maxFailedRepairs is how many failed repairs of the same damaged file
// the ledger allows before it refuses (RepairOptions.Force overrides).
const maxFailedRepairs = 3

// databaseHash hashes a database with its WAL: the same main file with
// newer commits in its WAL is different content.
func databaseHash(path string) (string, error) {
	h := sha256.New()
	for _, p := range []string{path, path + "-wal"} {
		f, err := openSideFile(p, os.O_RDONLY, 0)
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

// syncDir makes a rename in dir durable (best effort; not on Windows).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// copyFile copies src to dst (0600) and fsyncs it. Neither may be a
// symlink or other non-regular file (openSideFile).
func copyFile(src, dst string) error {
	in, err := openSideFile(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := openSideFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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

// copyDatabase copies a database and its WAL (when present).
func copyDatabase(src, dst string) error {
	if err := copyFile(src, dst); err != nil {
		return err
	}
	os.Remove(dst + "-wal")
	os.Remove(dst + "-shm")
	if _, err := os.Stat(src + "-wal"); err == nil {
		return copyFile(src+"-wal", dst+"-wal")
	}
	return nil
}

// backupForRepair copies the database (and its WAL) before any surgery,
// as <path>.repair-<UTC time>-<pid>.bak. A backup with the same content is
// reused instead of copied again; at most maxRepairBackups are kept (the
// oldest go); the copy is refused when the disk lacks room for it twice
// over, so a backup never fills the disk the repair needs.
func backupForRepair(path, hash string) (string, error) {
	existing, _ := filepath.Glob(path + ".repair-*.bak")
	sort.Strings(existing) // names sort by time
	for _, b := range existing {
		if h, err := databaseHash(b); err == nil && h == hash {
			return b, nil
		}
	}
	need := fileAndWALSize(path)
	if free, ok := fsx.FreeSpace(filepath.Dir(path)); ok && free < 2*need {
		return "", fmt.Errorf("not enough free space for a backup: %d bytes free, %d needed", free, 2*need)
	}
	dst := fmt.Sprintf("%s.repair-%s-%d.bak", path, time.Now().UTC().Format("20060102T150405.000Z"), os.Getpid())
	if err := copyDatabase(path, dst); err != nil {
		os.Remove(dst)
		os.Remove(dst + "-wal")
		return "", fmt.Errorf("back up %s: %w", path, err)
	}
	syncDir(filepath.Dir(dst))
	existing = append(existing, dst)
	for len(existing) > maxRepairBackups {
		os.Remove(existing[0])
		os.Remove(existing[0] + "-wal")
		existing = existing[1:]
	}
	return dst, nil
}

// ledger counts failed repairs per damaged file content, in
// <path>.repair-attempts.json, so a repair that cannot work is not retried
// forever (each try costs a backup and minutes of I/O).
type ledger struct {
	path     string
	Failures map[string]int `json:"failures"` // content hash → failed attempts
}

func loadLedger(dbPath string) (*ledger, error) {
	l := &ledger{path: dbPath + ".repair-attempts.json", Failures: map[string]int{}}
	b, err := readSideFile(l.path)
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

func (l *ledger) save() error {
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
	// its target); the temporary file is written through openSideFile.
	tmp := l.path + ".tmp"
	if err := writeSideFile(tmp, b); err != nil {
		return err
	}
	return os.Rename(tmp, l.path)
}

// refusal explains why the ledger refuses another attempt.
func (l *ledger) refusal(hash string) error {
	if n := l.Failures[hash]; n >= maxFailedRepairs {
		return fmt.Errorf("automatic repair has already failed %d times on this exact file; restore a backup, export what is readable, or delete %s (or pass --force) to try again",
			n, l.path)
	}
	return nil
}
