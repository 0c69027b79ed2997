package db

import (
	"os"
	"strconv"
	"strings"
)

// processStart returns pid's start time in clock ticks since boot (field 22
// of /proc/PID/stat), which tells a recycled pid from the original process.
func processStart(pid int) (uint64, bool) {
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
