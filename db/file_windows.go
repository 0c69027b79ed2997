//go:build windows

package db

import "os"

// createExclusive creates a new file; Windows has no O_NOFOLLOW, and
// prepareFile has already refused a symlink at the path.
func createExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// writable is checked by SQLite itself on Windows.
func writable(string) error { return nil }

// linkCount is not read on Windows (it needs an open handle); hard links
// to a database are rare there and refused only on Unix.
func linkCount(string) uint64 { return 0 }

// owner is not tracked on Windows: ACLs, not modes, guard the files.
type owner struct{}

func (owner) belongsToAnotherUser() bool { return false }

func fileOwner(path string) (owner, bool) {
	_, err := os.Stat(path)
	return owner{}, err == nil
}

func giveTo(*os.File, owner) {}

func refuseForeignOwner(string) error { return nil }
