//go:build !((linux || darwin) && !(sqlite3_flock || sqlite3_dotlk))

package db

// shmFileBacked: elsewhere the wal-index may live in memory the -shm file
// does not reflect, so every commit stamps page 1.
const shmFileBacked = false
