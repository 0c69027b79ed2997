//go:build !unix

package fsx

// DescriptorsExhausted cannot tell here; an open that fails for want of
// handles keeps SQLite's own error.
func DescriptorsExhausted() bool { return false }
