//go:build unix

package fsx

import (
	"errors"
	"os"
	"syscall"
)

// DescriptorsExhausted reports whether this process is at, or within a
// few descriptors of, its open-file limit: what makes an open fail with
// EMFILE. An open SQLite could not complete gives back its descriptors on
// the way out, so a margin stands for them.
func DescriptorsExhausted() bool {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return false
	}
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
	}
	const margin = 4 // the database, its WAL and shared memory, and the directory read itself
	return uint64(len(entries))+margin >= lim.Cur
}
