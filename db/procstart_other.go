//go:build !linux

package db

// processStart is not known here: holders carry no start time and a live
// pid is taken as the holder (never reclaimed early).
func processStart(int) (uint64, bool) { return 0, false }
