//go:build unix

package sidefile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Open opens a side file beside the database (flag and perm as for
// os.OpenFile) so that nothing planted at its path can redirect or block
// it: the last element is never followed (O_NOFOLLOW), the open cannot
// block on a FIFO (O_NONBLOCK, cleared again once fstat has shown a
// regular file, before any read or write), and anything but a regular
// file is refused with a NotRegularError. Every side file sessiondb opens
// goes through here; the database and its -wal/-shm are opened by SQLite.
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	// Checked first so a device is never opened at all; the fstat below is
	// what holds against a swap after this check.
	if err := RefuseNonRegular(path); err != nil {
		return nil, err
	}
	fd, err := syscall.Open(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) || errors.Is(err, syscall.ENXIO) {
			if rerr := RefuseNonRegular(path); rerr != nil {
				return nil, rerr
			}
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, &NotRegularError{Path: path, What: describe(fileModeOf(uint32(st.Mode)))}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// fileModeOf converts a stat mode's type bits to fs.FileMode's.
func fileModeOf(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFDIR:
		return fs.ModeDir
	}
	return fs.ModeIrregular
}
