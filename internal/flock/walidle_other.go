//go:build !linux

package flock

import "os"

// HoldWALIdle reports whether no connection has the database open in WAL
// mode. Without open-file-description locks it cannot test the shared
// memory's lock without risking this process's own locks, so it answers
// yes only when there is no -shm file at all (every WAL connection has
// one), and the foreign-WAL check runs only then.
func HoldWALIdle(path string) (release func(), idle bool, err error) {
	if _, err := os.Lstat(path + "-shm"); os.IsNotExist(err) {
		return func() {}, true, nil
	}
	return nil, false, nil
}
