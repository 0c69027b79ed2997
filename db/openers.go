package db

import "github.com/sessiondb/sessiondb/internal/proc"

// otherOpeners names the other processes that have the database, its WAL
// or its shared memory open; known is false where the platform cannot
// tell.
func otherOpeners(path string) (who []string, known bool) {
	return proc.OpenersOf(path, path+"-wal", path+"-shm")
}

// shmOpeners names the other processes that have the database's shared
// memory open: every connection in WAL mode does, so a reader pinning the
// log is among them.
func shmOpeners(path string) (who []string, known bool) { return proc.OpenersOf(path + "-shm") }
