//go:build !((linux || darwin) && !(sqlite3_flock || sqlite3_dotlk))

package forensics

// SHMFileBacked: elsewhere the wal-index may live in memory the -shm file
// does not reflect, so every commit stamps page 1.
const SHMFileBacked = false
