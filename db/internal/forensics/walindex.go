package forensics

import (
	"encoding/binary"
	"os"
)

// The wal-index header (https://www.sqlite.org/walformat.html §2.1): two
// copies of a 48-byte header, then the checkpoint information, whose
// first field is nBackfill; in the byte order of the machine SQLite runs
// on, which for this driver's WebAssembly build is always little-endian.
const (
	walIndexHeaderBytes = 48
	walIndexIsInit      = 12
	walIndexMxFrame     = 16
	walIndexSalts       = 32 // two 32-bit salts
	walIndexNBackfill   = 2 * walIndexHeaderBytes
)

// AppendingTo reads the wal-index from shm (the -shm file, which
// SHMFileBacked says is what SQLite sees) on behalf of a transaction that holds the
// write lock, and returns the salts of the WAL generation its commit
// appends to. ok is false when that is not known: the index unreadable,
// uninitialised or torn between its two copies, or every frame already
// copied back into the main file (mxFrame at nBackfill), when the commit
// may start a new generation whose salts are not known yet.
//
// SQLite starts the WAL over only in a write transaction whose read began
// with every frame backfilled. Once the transaction holds the write lock,
// mxFrame and the salts cannot change and nBackfill can only grow to meet
// mxFrame, so finding mxFrame ahead proves the read began ahead too.
func AppendingTo(shm *os.File) (salts string, ok bool) {
	var b [walIndexNBackfill + 4]byte
	if _, err := shm.ReadAt(b[:], 0); err != nil {
		return "", false
	}
	first, second := b[:walIndexHeaderBytes], b[walIndexHeaderBytes:2*walIndexHeaderBytes]
	if first[walIndexIsInit] == 0 || string(first) != string(second) {
		return "", false
	}
	le := binary.LittleEndian
	if le.Uint32(first[walIndexMxFrame:]) <= le.Uint32(b[walIndexNBackfill:]) {
		return "", false // may start a new generation, whose salts are not known yet
	}
	return string(first[walIndexSalts : walIndexSalts+8]), true
}

// WALSize is the size in bytes of the WAL beside the database at path (0
// when there is none).
func WALSize(path string) int64 {
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}
