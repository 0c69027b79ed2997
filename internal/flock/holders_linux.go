package flock

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/sessiondb/sessiondb/internal/proc"
)

// Holders names the processes holding write-class locks on the
// database, its WAL or its shared-memory file, from /proc/locks. OFD locks
// (which this driver and other modern SQLite builds use) show pid -1 there;
// their owners are found through /proc/<pid>/fdinfo. Best effort: it
// returns what it can read and never fails.
func Holders(path string) []string {
	type fileID struct {
		dev uint64
		ino uint64
	}
	files := map[fileID]string{}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			files[fileID{uint64(st.Dev), st.Ino}] = filepath.Base(p)
		}
	}
	if len(files) == 0 {
		return nil
	}
	match := func(fields []string) (name, what string, ok bool) {
		// TYPE ADVISORY KIND PID MAJ:MIN:INODE START END
		if len(fields) < 7 || fields[2] != "WRITE" {
			return "", "", false
		}
		id, ok := parseLockDevice(fields[4])
		if !ok {
			return "", "", false
		}
		name, ok = files[fileID{id[0], id[1]}]
		if !ok {
			return "", "", false
		}
		return name, lockRangeName(name, fields[5]), true
	}

	var holders []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			holders = append(holders, s)
		}
	}
	ofd := false
	eachLine("/proc/locks", func(line string) {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[1] == "->" { // waiters, not holders
			return
		}
		fields = fields[1:]
		name, what, ok := match(fields)
		if !ok {
			return
		}
		if fields[3] == "-1" {
			ofd = true
			return
		}
		add(fmt.Sprintf("pid %s (%s) holds the %s on %s", fields[3], processName(fields[3]), what, name))
	})
	if ofd {
		procs, _ := filepath.Glob("/proc/[0-9]*/fdinfo/*")
		for _, fdinfo := range procs {
			pid := strings.Split(fdinfo, "/")[2]
			eachLine(fdinfo, func(line string) {
				rest, ok := strings.CutPrefix(line, "lock:")
				if !ok {
					return
				}
				fields := strings.Fields(rest)
				if len(fields) < 2 {
					return
				}
				if name, what, ok := match(fields[1:]); ok {
					add(fmt.Sprintf("pid %s (%s) holds the %s on %s", pid, processName(pid), what, name))
				}
			})
		}
	}
	if len(holders) == 0 {
		return []string{"no write-class lock was held at the deadline (the holder may just have released it)"}
	}
	return holders
}

// parseLockDevice parses /proc/locks' "MAJ:MIN:INODE" (hex device numbers)
// into the stat(2) device number and the inode.
func parseLockDevice(s string) ([2]uint64, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return [2]uint64{}, false
	}
	major, err1 := strconv.ParseUint(parts[0], 16, 32)
	minor, err2 := strconv.ParseUint(parts[1], 16, 32)
	ino, err3 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return [2]uint64{}, false
	}
	dev := (major&0xfff)<<8 | (major&^0xfff)<<32 | (minor & 0xff) | (minor&^0xff)<<12
	return [2]uint64{dev, ino}, true
}

// lockRangeName explains SQLite's lock byte offsets.
func lockRangeName(file, start string) string {
	off, _ := strconv.ParseUint(start, 10, 64)
	if strings.HasSuffix(file, "-shm") {
		switch off {
		case 120:
			return "WAL write lock"
		case 121:
			return "checkpoint lock"
		case 122:
			return "recovery lock"
		}
		return "shared-memory lock at byte " + start
	}
	switch off {
	case 0x40000000:
		return "PENDING lock"
	case 0x40000001:
		return "RESERVED (write) lock"
	case 0x40000002:
		return "EXCLUSIVE lock"
	}
	return "write lock at byte " + start
}

// processName names the process whose pid /proc wrote as text.
func processName(pid string) string {
	n, err := strconv.Atoi(pid)
	if err != nil {
		return "unknown"
	}
	return proc.Name(n)
}

func eachLine(path string, fn func(string)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fn(sc.Text())
	}
}
