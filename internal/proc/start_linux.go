package proc

import (
	"os"
	"strconv"
	"strings"
)

// StartTime returns pid's start time in clock ticks since boot (field 22
// of /proc/PID/stat), which tells a recycled pid from the original process.
func StartTime(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(s[i+1:])
	const startField = 22 - 3 // fields after ")" start at field 3
	if len(fields) <= startField {
		return 0, false
	}
	n, err := strconv.ParseUint(fields[startField], 10, 64)
	return n, err == nil
}

// Name returns pid's command line, shortened to 80 characters ("unknown"
// when it cannot be read), for messages that name a process.
func Name(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return "unknown"
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
