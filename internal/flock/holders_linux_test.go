package flock

import "testing"

// /proc/locks writes the device as hex MAJ:MIN and the inode in decimal;
// the device number must come out as stat(2) gives it.
func TestParseLockDevice(t *testing.T) {
	cases := []struct {
		in       string
		dev, ino uint64
		ok       bool
	}{
		{"08:01:1234", 0x801, 1234, true},
		{"fd:00:42", 0xfd00, 42, true},
		{"103:105:7", 0x110305, 7, true}, // the minor's bits above 0xff go above the major's
		{"08:01", 0, 0, false},
		{"zz:01:1", 0, 0, false},
	}
	for _, c := range cases {
		got, ok := parseLockDevice(c.in)
		if ok != c.ok || (ok && (got[0] != c.dev || got[1] != c.ino)) {
			t.Errorf("parseLockDevice(%q) = %x, %v; want [%x %d], %v", c.in, got, ok, c.dev, c.ino, c.ok)
		}
	}
}

func TestLockRangeName(t *testing.T) {
	cases := []struct{ file, start, want string }{
		{"x.db-shm", "120", "WAL write lock"},
		{"x.db-shm", "121", "checkpoint lock"},
		{"x.db-shm", "7", "shared-memory lock at byte 7"},
		{"x.db", "1073741825", "RESERVED (write) lock"},
		{"x.db", "9", "write lock at byte 9"},
	}
	for _, c := range cases {
		if got := lockRangeName(c.file, c.start); got != c.want {
			t.Errorf("lockRangeName(%q, %q) = %q, want %q", c.file, c.start, got, c.want)
		}
	}
}
