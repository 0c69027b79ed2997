//go:build windows

package fsx

import "os"

// CreateExclusive creates a new file; Windows has no O_NOFOLLOW, and the
// caller has already refused a symlink at the path.
func CreateExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// Writable is checked by SQLite itself on Windows.
func Writable(string) error { return nil }

// LinkCount is not read on Windows (it needs an open handle); hard links
// to a database are rare there and refused only on Unix.
func LinkCount(string) uint64 { return 0 }

// Owner is not tracked on Windows: ACLs, not modes, guard the files.
type Owner struct{}

func (Owner) BelongsToAnotherUser() bool { return false }

// SideFilePerm is not used on Windows.
func (Owner) SideFilePerm() os.FileMode { return 0o600 }

func FileOwner(path string) (Owner, bool) {
	_, err := os.Stat(path)
	return Owner{}, err == nil
}

func GiveTo(*os.File, Owner) {}

func ForeignOwner(string) (uid int, foreign bool) { return 0, false }
