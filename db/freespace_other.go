//go:build !unix

package db

// freeSpace is unknown here; the backup copy itself will fail if the disk
// fills.
func freeSpace(string) (int64, bool) { return 0, false }
