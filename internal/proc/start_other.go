//go:build !linux

package proc

// StartTime is not known here: holders carry no start time and a live
// pid is taken as the holder (never reclaimed early).
func StartTime(int) (uint64, bool) { return 0, false }

// Name cannot read another process's command line here.
func Name(int) string { return "unknown" }
