//go:build windows

package sidefile

import (
	"io/fs"
	"os"
)

// Open opens a side file beside the database, refusing anything
// but a regular file (a symbolic link or junction included). Windows has
// no O_NOFOLLOW; the check before the open and the one after it leave
// only a swap in between.
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := RefuseNonRegular(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, What: describe(fi.Mode())}
	}
	return f, nil
}
