//go:build !unix

package db

// descriptorsExhausted cannot tell here; an open that fails for want of
// handles keeps SQLite's own error.
func descriptorsExhausted() bool { return false }
