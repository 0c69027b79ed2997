//go:build !linux

package db

// otherOpeners cannot tell here which processes have the file open.
func otherOpeners(string) (who []string, known bool) { return nil, false }

// shmOpeners cannot tell here which processes have the shared memory open.
func shmOpeners(string) (who []string, known bool) { return nil, false }

// aliasedOpener cannot see other processes' open files here; the link
// count check still applies.
func aliasedOpener(string) error { return nil }
