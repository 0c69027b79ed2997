package db

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// otherOpeners names the other processes that have the database, its WAL
// or its shared memory open, from /proc/*/fd. known is true: Linux can
// tell. Processes of other users whose descriptors cannot be read are not
// seen.
func otherOpeners(path string) (who []string, known bool) {
	return openersOf(path, path+"-wal", path+"-shm"), true
}

// shmOpeners names the other processes that have the database's shared
// memory open: every connection in WAL mode does, so a reader pinning the
// log is among them.
func shmOpeners(path string) (who []string, known bool) {
	return openersOf(path + "-shm"), true
}

// openersOf names the other processes that have any of files open.
func openersOf(files ...string) (who []string) {
	type fileID struct{ dev, ino uint64 }
	ours := map[fileID]bool{}
	for _, p := range files {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			ours[fileID{uint64(st.Dev), st.Ino}] = true
		}
	}
	self := strconv.Itoa(os.Getpid())
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	seen := map[string]bool{}
	for _, fd := range fds {
		pid := filepath.Base(filepath.Dir(filepath.Dir(fd)))
		if pid == self || seen[pid] {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(fd, &st) == nil && ours[fileID{uint64(st.Dev), st.Ino}] {
			seen[pid] = true
			who = append(who, fmt.Sprintf("pid %s (%s)", pid, processName(pid)))
		}
	}
	return who
}
