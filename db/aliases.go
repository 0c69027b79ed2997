package db

import (
	"github.com/sessiondb/sessiondb/internal/fsx"
	"github.com/sessiondb/sessiondb/internal/proc"
)

// refuseAliased refuses a database file with a second name before any
// connection writes through this one. SQLite derives the WAL and shared
// memory names from the path it was given, so a hard link or a file bind
// mount in use elsewhere means two logs for one file: each writer
// checkpoints its own log into the shared file and the two corrupt it
// within seconds. A link count above 1 is refused outright (no other
// process need be running yet: the next one to use the other name would
// corrupt the file); on Linux, so is another process holding the same
// inode under a path whose WAL is not this path's WAL. An absent file has
// no aliases.
func refuseAliased(path string) error {
	if n := fsx.LinkCount(path); n > 1 {
		return &AliasedFileError{Path: path, Links: n}
	}
	if a, found := proc.FindAlias(path, path+"-wal"); found {
		return &AliasedFileError{Path: path, Other: a.Other, PID: a.PID, Process: a.Process}
	}
	return nil
}
