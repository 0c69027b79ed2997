//go:build (linux || darwin) && !(sqlite3_flock || sqlite3_dotlk)

package forensics

// SHMFileBacked: with these build constraints (those of the driver's
// vfs/shm_ofd.go) the driver's VFS maps the -shm file itself as SQLite's
// wal-index, so reading the file reads what SQLite sees.
const SHMFileBacked = true
