//go:build !linux

package proc

// OpenersOf cannot tell here which processes have the files open.
func OpenersOf(...string) (who []string, known bool) { return nil, false }

// FindAlias cannot see other processes' open files here.
func FindAlias(string, string) (Alias, bool) { return Alias{}, false }
