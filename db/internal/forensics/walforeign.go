package forensics

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/sessiondb/sessiondb/internal/flock"
)

// A WAL does not name the database it belongs to, and SQLite replays any
// valid WAL it finds beside a database file into it: a -wal left behind
// when the main file was restored from another copy is applied to that
// copy, silently mixing two databases' pages. ForeignWAL tells, before
// SQLite first reads the pair, whether the frames SQLite would replay can
// belong to the main file. It reads only what SQLite's own WAL recovery
// reads, and follows the format in https://www.sqlite.org/fileformat2.html
// §4 (WAL header, frame headers, cumulative checksums, salts). It runs
// only when no connection has the database open — exactly when SQLite is
// about to run that recovery, which reads the whole WAL too — so it costs
// one more read of the WAL, from the page cache, and an Lstat when there
// is none. A sessiondb writer's first commit into each WAL generation
// writes page 1 (stampWAL, package db's walstamp.go), so a WAL sessiondb wrote always
// holds page 1, whose application_id decides.
//
// What a WAL SQLite would replay must satisfy when it belongs to the main
// file, and so what is detected (each rule below is a consequence of how
// SQLite writes WAL frames; none can fire on a genuine pair):
//
//   - Page size: the WAL's must equal the main file's (WAL mode cannot
//     change the page size).
//   - When the replayed frames hold page 1 (any transaction that grows or
//     shrinks the file, changes the schema or a header field writes it):
//     the main file's application_id — sessiondb's per-file stamp, derived
//     from its random generation id — must be one of those images' (or 0:
//     a file whose stamp is still in this WAL); and the main file's change
//     counter must lie between the first image's minus one and the last
//     image's (a writer sets the counter to the last value it read plus
//     one, so the counters never go back and the first image's is at most
//     one above the page 1 the WAL started from; the main file holds that
//     page 1 or one a checkpoint copied out of the WAL).
//   - When they do not hold page 1, no sessiondb writer wrote them (it
//     stamps page 1 into every generation), so another program did: the
//     -shm beside the WAL must be the wal-index of that generation
//     (shmIndexes), as it is when that program stopped beside its own
//     file; a WAL copied alone from elsewhere has none.
//   - When they do not hold page 1: no transaction in the WAL changed the
//     file's size, freelist or schema, so every commit frame's database
//     size must equal the main file's page count (by its header or by its
//     length), and every b-tree page in the WAL must overwrite a b-tree
//     page of the same kind (table/index, leaf/interior) in the main file
//     (checked only without auto-vacuum, whose pointer-map pages change in
//     place, and below 2^25 pages, where no overflow page can start with a
//     b-tree kind byte).
//
// What it cannot detect: a WAL without page 1 copied together with its
// -shm beside a file with the same page size, page count and page kinds
// as the one it was written against, e.g. an identically shaped database
// or an earlier copy of the same one whose transactions since the last
// checkpoint only rewrote rows in place; and a WAL with page 1 written against
// another copy of the same database (same application_id) whose change
// counter happens to fall in the WAL's range. The WAL header's salts and
// checkpoint sequence number are not compared: the main file records
// neither, so they cannot tell one file's WAL from another's.

// The WAL format's constants.
const (
	// WALHeaderBytes is the size of the WAL's header: a WAL no longer than
	// that holds no frame.
	WALHeaderBytes = 32
	// WALFrameHeaderBytes is the size of each frame's header, before its
	// page.
	WALFrameHeaderBytes = 24
	walMagic            = 0x377f0682 // | 1: checksums over big-endian words
	walVersion          = 3007000
)

// WALSummary is what the frames SQLite would replay say.
type WALSummary struct {
	PageSize    int
	Salts       string          // the header's salts, which name the WAL's generation
	Frames      int             // frames up to and including the last commit frame
	CommitSizes map[uint32]bool // the database sizes in pages the commits leave
	Page1       int             // images of page 1
	Counters    [2]uint32       // the first and last page 1 image's change counter
	AppIDs      map[uint32]bool // the page 1 images' application_ids
	Kinds       map[uint32]byte // first byte of each page's last image (page > 1)
}

// ReadWAL summarises the committed, checksum-valid frames of the WAL at
// walPath exactly as SQLite's recovery would find them. A missing, empty
// or invalid WAL (SQLite ignores it and starts a new one) has no frames.
func ReadWAL(walPath string) (WALSummary, error) {
	f, err := os.Open(walPath)
	if errors.Is(err, fs.ErrNotExist) {
		return WALSummary{}, nil
	}
	if err != nil {
		return WALSummary{}, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr [WALHeaderBytes]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return WALSummary{}, nil // shorter than a header: ignored by SQLite
	}
	be := binary.BigEndian
	magic := be.Uint32(hdr[0:])
	pageSize := int(be.Uint32(hdr[8:]))
	if magic&^1 != walMagic || be.Uint32(hdr[4:]) != walVersion ||
		pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return WALSummary{}, nil
	}
	bigEndian := magic&1 == 1
	s1, s2 := walChecksum(bigEndian, hdr[:24], 0, 0)
	if s1 != be.Uint32(hdr[24:]) || s2 != be.Uint32(hdr[28:]) {
		return WALSummary{}, nil
	}
	salts := hdr[16:24]

	sum := WALSummary{PageSize: pageSize, Salts: string(salts), CommitSizes: map[uint32]bool{}, AppIDs: map[uint32]bool{}, Kinds: map[uint32]byte{}}
	type pending struct {
		pgno uint32
		kind byte
	}
	var (
		since  []pending   // frames after the last commit frame
		sinceP [][2]uint32 // their page 1 images: change counter, application_id
		frame  = make([]byte, WALFrameHeaderBytes+pageSize)
		n      int
	)
	for {
		if _, err := io.ReadFull(r, frame); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return sum, nil
			}
			return WALSummary{}, err
		}
		pgno := be.Uint32(frame[0:])
		if pgno == 0 || string(frame[8:16]) != string(salts) {
			return sum, nil
		}
		s1, s2 = walChecksum(bigEndian, frame[:8], s1, s2)
		s1, s2 = walChecksum(bigEndian, frame[WALFrameHeaderBytes:], s1, s2)
		if s1 != be.Uint32(frame[16:]) || s2 != be.Uint32(frame[20:]) {
			return sum, nil
		}
		n++
		page := frame[WALFrameHeaderBytes:]
		if pgno == 1 {
			sinceP = append(sinceP, [2]uint32{be.Uint32(page[24:]), be.Uint32(page[68:])})
		} else {
			since = append(since, pending{pgno, page[0]})
		}
		if size := be.Uint32(frame[4:]); size != 0 { // a commit frame
			sum.Frames = n
			sum.CommitSizes[size] = true
			for _, p1 := range sinceP {
				if sum.Page1 == 0 {
					sum.Counters[0] = p1[0]
				}
				sum.Page1++
				sum.Counters[1] = p1[0]
				sum.AppIDs[p1[1]] = true
			}
			for _, p := range since {
				sum.Kinds[p.pgno] = p.kind
			}
			since, sinceP = since[:0], sinceP[:0]
		}
	}
}

// walChecksum continues SQLite's WAL checksum over b (a multiple of 8
// bytes), reading 32-bit words in the byte order the WAL's magic names.
func walChecksum(bigEndian bool, b []byte, s1, s2 uint32) (uint32, uint32) {
	var order binary.ByteOrder = binary.LittleEndian
	if bigEndian {
		order = binary.BigEndian
	}
	for i := 0; i+8 <= len(b); i += 8 {
		s1 += order.Uint32(b[i:]) + s2
		s2 += order.Uint32(b[i+4:]) + s1
	}
	return s1, s2
}

// isBtreeKind reports a b-tree page's first byte.
func isBtreeKind(b byte) bool { return b == 2 || b == 5 || b == 10 || b == 13 }

// ForeignWAL returns why the WAL beside path cannot belong to it, or ""
// when SQLite would replay nothing or the frames fit the main file (see
// the rules above).
func ForeignWAL(path string) (string, error) {
	wal, err := ReadWAL(path + "-wal")
	if err != nil || wal.Frames == 0 {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 100)
	if _, err := io.ReadFull(f, head); err != nil {
		return "", nil // not a full header: QuarantineTorn's and SQLite's to judge
	}
	if string(head[:len(SQLiteHeader)]) != string(SQLiteHeader) {
		return "", nil
	}
	be := binary.BigEndian
	pageSize := int(be.Uint16(head[16:]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize != wal.PageSize {
		return fmt.Sprintf("the WAL's page size is %d bytes, the database's %d", wal.PageSize, pageSize), nil
	}
	counter, appID := be.Uint32(head[24:]), be.Uint32(head[68:])

	if wal.Page1 > 0 {
		if appID != 0 && !wal.AppIDs[appID] {
			return fmt.Sprintf("the WAL belongs to another database (application_id %v), this file's is %d", slices.Sorted(maps.Keys(wal.AppIDs)), appID), nil
		}
		if first, last := wal.Counters[0], wal.Counters[1]; counter+1 < first || counter > last {
			return fmt.Sprintf("the WAL was written against another version of the file (its change counters run %d..%d, the file's is %d)",
				first, last, counter), nil
		}
		return "", nil
	}

	if !shmIndexes(path+"-shm", wal.Salts) {
		return "the WAL holds no page 1, so no sessiondb writer wrote it, and no -shm beside it indexes it: " +
			"another program's WAL, left or copied beside this file", nil
	}
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	filePages := uint32(fi.Size() / int64(pageSize))
	headerPages := be.Uint32(head[28:])
	if headerPages == 0 || be.Uint32(head[92:]) != counter {
		headerPages = filePages // SQLite's rule for a stale in-header size
	}
	for size := range wal.CommitSizes {
		if size != headerPages && size != filePages {
			return fmt.Sprintf("the WAL's transactions leave the database %d pages long without changing its first page, but the file has %d",
				size, headerPages), nil
		}
	}
	if be.Uint32(head[52:]) != 0 || filePages >= 1<<25 {
		return "", nil
	}
	var b [1]byte
	for pgno, kind := range wal.Kinds {
		if !isBtreeKind(kind) {
			continue
		}
		if _, err := f.ReadAt(b[:], int64(pgno-1)*int64(pageSize)); err != nil {
			return fmt.Sprintf("the WAL writes page %d, beyond the end of the file", pgno), nil
		}
		if b[0] != kind {
			return fmt.Sprintf("the WAL's page %d is a b-tree page of kind %d, the file's is not (first byte %d)", pgno, kind, b[0]), nil
		}
	}
	return "", nil
}

// shmIndexes reports whether the shared-memory file at shmPath is the
// wal-index of the WAL generation named by salts: initialised, its two
// header copies equal, and its salts those of the WAL's header (SQLite
// copies them byte for byte, so no byte order matters). A WAL that holds
// no page 1 was written by another program (sessiondb stamps page 1 into
// every generation it writes, package db's walstamp.go); when that program wrote this
// file and stopped without a checkpoint (killed, or still running), its
// -shm indexes the WAL. A WAL copied here from another file comes without
// one — a clean close removes the -shm, and Open's own is empty — and was
// replayed whenever the two files had the same size and page kinds,
// as two stores made alike have (issue 38). What this cannot tell: a
// -shm copied along with the WAL, and a -shm that a power cut left stale
// beside another program's WAL of this file, whose frames are then
// retired (kept beside the file, never applied) instead of replayed.
func shmIndexes(shmPath, salts string) bool {
	f, err := os.Open(shmPath)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2 * walIndexHeaderBytes]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	first, second := b[:walIndexHeaderBytes], b[walIndexHeaderBytes:]
	return first[walIndexIsInit] != 0 && string(first) == string(second) &&
		string(first[walIndexSalts:walIndexSalts+8]) == salts
}

// IdleForeignWAL checks the WAL beside path when no connection has the
// database open (a live connection's WAL is its own, and changes under
// the check) and returns why it is foreign, or "". Until release (never
// nil) is called, no connection can open the database.
func IdleForeignWAL(path string) (why string, release func(), err error) {
	if fi, err := os.Lstat(path + "-wal"); err != nil || fi.Size() < WALHeaderBytes+WALFrameHeaderBytes+512 {
		return "", func() {}, nil // no frame to replay (the common case: a clean close removed the WAL)
	}
	release, idle, err := flock.HoldWALIdle(path)
	if err != nil || !idle {
		return "", func() {}, err
	}
	if why, err = ForeignWAL(path); err != nil {
		release()
		return "", func() {}, err
	}
	return why, release, nil
}

// RetireForeignWAL moves a foreign WAL (see ForeignWAL) aside with its
// shared memory, to <path>.retired-<UTC time>-<pid>.bak-wal, before SQLite
// can replay it, and says so at Error level. It returns why and where to,
// or "" when it left the WAL alone. Callers hold the migration lock, so
// no sessiondb opener races the move.
func RetireForeignWAL(path string, log *slog.Logger) (why, movedTo string, err error) {
	why, release, err := IdleForeignWAL(path)
	defer release()
	if err != nil || why == "" {
		return "", "", err
	}
	if movedTo, err = moveSidecars(path); err != nil {
		return why, "", fmt.Errorf("retire the foreign WAL of %s (%s): %w", path, why, err)
	}
	log.Error("sessiondb: the WAL beside the database belongs to another copy of it and was NOT applied; it has been retired",
		"path", path, "reason", why, "moved_to", movedTo)
	return why, movedTo, nil
}

// RetiredBase names where a WAL that must never meet its file goes:
// <path>.retired-<UTC time>-<pid>.bak, plus the sidecar's suffix.
func RetiredBase(path string) string {
	return fmt.Sprintf("%s.retired-%s-%d.bak", path, time.Now().UTC().Format("20060102T150405Z"), os.Getpid())
}

// moveSidecars renames path's -wal and -shm to RetiredBase and returns the
// WAL's new name.
func moveSidecars(path string) (string, error) {
	dst := RetiredBase(path)
	for _, side := range []string{"-wal", "-shm"} {
		if err := os.Rename(path+side, dst+side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return dst + "-wal", nil
}
