//go:build !unix

package fsx

// FreeSpace is unknown here; the backup copy itself will fail if the disk
// fills.
func FreeSpace(string) (int64, bool) { return 0, false }
