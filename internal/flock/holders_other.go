//go:build !linux

package flock

// Holders is Linux-only (/proc/locks); elsewhere the error says only
// that the lock was held.
func Holders(string) []string { return nil }
