package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// fileID identifies a file whatever path reaches it.
type fileID struct{ dev, ino uint64 }

func statID(p string) (fileID, bool) {
	var st syscall.Stat_t
	if syscall.Stat(p, &st) != nil {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

// forEachOpenFile calls fn for every descriptor of every process whose
// /proc/PID/fd this user can read, with the file it refers to. Processes
// of other users whose descriptors cannot be read are not seen.
func forEachOpenFile(fn func(pid int, name string, id fileID)) {
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(fd))))
		if err != nil {
			continue
		}
		// The name is read on both sides of the stat: a descriptor closed
		// (or closed and reused for another file) while it is inspected
		// would pair one file's identity with another's name, or none.
		before, err := os.Readlink(fd)
		if err != nil {
			continue
		}
		id, ok := statID(fd)
		if after, err := os.Readlink(fd); ok && err == nil && after == before {
			fn(pid, before, id)
		}
	}
}

// OpenersOf names the other processes that have any of files open, from
// /proc/*/fd. known is true: Linux can tell.
func OpenersOf(files ...string) (who []string, known bool) {
	ours := map[fileID]bool{}
	for _, p := range files {
		if id, ok := statID(p); ok {
			ours[id] = true
		}
	}
	self := os.Getpid()
	seen := map[int]bool{}
	forEachOpenFile(func(pid int, _ string, id fileID) {
		if pid != self && !seen[pid] && ours[id] {
			seen[pid] = true
			who = append(who, fmt.Sprintf("pid %d (%s)", pid, Name(pid)))
		}
	})
	return who, true
}

// FindAlias finds a process (this one included) holding the file at path
// open under a name whose companion file is not wal: a file bind mount has
// one link but two names, and SQLite names the WAL after the name. Two
// names share a WAL exactly when they are the same entry of the same
// directory (a directory bind mount or a symlinked parent is fine). A
// process whose name for the file cannot be resolved here (another mount
// namespace) is an alias unless it also has wal open. A process that has
// the file open for another reason under another name (a backup tool
// copying a bind-mounted path) is reported too: it cannot be told from a
// SQLite writer.
func FindAlias(path, wal string) (Alias, bool) {
	main, ok := statID(path)
	if !ok {
		return Alias{}, false
	}
	dir, _ := statID(filepath.Dir(path))
	walID, hasWAL := statID(wal)
	sameName := func(other string) bool {
		d, ok := statID(filepath.Dir(other))
		return ok && d == dir && filepath.Base(other) == filepath.Base(path)
	}
	type suspect struct {
		pid   int
		other string
	}
	var suspects []suspect
	withOurWAL := map[int]bool{}
	forEachOpenFile(func(pid int, name string, id fileID) {
		switch {
		case hasWAL && id == walID:
			withOurWAL[pid] = true
		case id == main:
			if sameName(name) {
				return
			}
			suspects = append(suspects, suspect{pid, name})
		}
	})
	for _, s := range suspects {
		if _, resolvable := statID(filepath.Dir(s.other)); !resolvable && withOurWAL[s.pid] {
			continue
		}
		return Alias{PID: s.pid, Process: Name(s.pid), Other: s.other}, true
	}
	return Alias{}, false
}
