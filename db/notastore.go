package db

// What stands at a path, found before anything is created, chmod-ed,
// migrated or journal-switched there. A wrong --db (another program's
// SQLite database, /etc/passwd, a directory, a device) must come back
// exactly as it was: same bytes, same mode, no side file beside it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/sessiondb/sessiondb/db/internal/forensics"
)

// NotAStoreError refuses a path that holds something other than a
// sessiondb store, which sessiondb will not turn into one. Open (read-write
// or read-only), Verify and Repair return it before they create, change or
// lock anything: the file keeps its bytes and its mode, and no -wal, -shm
// or lock file is left beside it. It matches ErrNotAStore and
// ErrNotDatabase; it is not damage.
type NotAStoreError struct {
	Path  string
	Found string // what is there: "a SQLite database of another program (tables: users)", "not a SQLite file (…)", "a directory"
}

func (e *NotAStoreError) Error() string {
	return fmt.Sprintf("%s is not a sessiondb store: it is %s; nothing was changed (check --db or SESSIONDB_PATH; a new store needs a new path)",
		e.Path, e.Found)
}

func (e *NotAStoreError) Is(target error) bool {
	return target == ErrNotAStore || target == ErrNotDatabase
}

// pathState is what inspectPath found.
type pathState int

const (
	// pathAbsent: nothing at the path. A write may create a store there.
	pathAbsent pathState = iota
	// pathEmpty: a zero-length file, or a SQLite database without a
	// single schema object and no log: it holds nothing to lose, so a
	// write may make a store of it (in place, keeping its mode); a read
	// never does.
	pathEmpty
	// pathTorn: a file whose header is not SQLite's but whose bytes are
	// all zero (what a power cut leaves of a new file on some
	// filesystems), a SQLite file cut inside its 100-byte header (nothing
	// anyone could lose is left in either), or one that still holds
	// sessiondb's schema: a damaged store. A write moves a zeroed one
	// aside (forensics.QuarantineTorn), Repair mends it, a read reports it.
	pathTorn
	// pathStore: a SQLite database whose schema is sessiondb's (or a part
	// of it, a first migration cut short).
	pathStore
)

// inspectPath tells what stands at path without creating, locking or
// changing anything: it reads the file's first bytes, and for a SQLite
// database its schema through an immutable connection (no lock, no -shm,
// no -wal). Anything that is not a store, an empty file or a torn store
// is a *NotAStoreError. On another VFS than the operating system's (a
// test harness) the file's schema is that VFS's to read, so only its bytes
// are looked at.
func inspectPath(ctx context.Context, path, vfsName string) (pathState, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return pathAbsent, nil
	case err != nil:
		return 0, readOnlyHint(path, fmt.Errorf("inspect: %w", err))
	case fi.IsDir():
		return 0, &NotAStoreError{Path: path, Found: "a directory (point --db or SESSIONDB_PATH at a file inside it)"}
	case !fi.Mode().IsRegular():
		return 0, &NotAStoreError{Path: path, Found: describeNonRegular(fi.Mode())}
	case fi.Size() == 0:
		return pathEmpty, nil
	}
	state, _, err := forensics.ReadHeader(path)
	if err != nil {
		return 0, readOnlyHint(path, fmt.Errorf("inspect: %w", err))
	}
	switch state {
	case forensics.HeaderEmpty: // emptied since the Stat
		return pathEmpty, nil
	case forensics.HeaderSQLite:
		if vfsName != "" {
			return pathStore, nil
		}
		return inspectSQLite(ctx, path)
	case forensics.HeaderTruncated:
		// A SQLite file cut inside its header: whosever it was, nothing
		// is left in it to lose; a store truncated so is ours, damaged.
		return pathTorn, nil
	}
	// Zeroed or foreign bytes where the header should be.
	if zero, err := allZero(path); err != nil {
		return 0, readOnlyHint(path, fmt.Errorf("inspect: %w", err))
	} else if zero {
		return pathTorn, nil
	}
	if ours, err := holdsStoreSchema(path); err != nil {
		return 0, readOnlyHint(path, fmt.Errorf("inspect: %w", err))
	} else if ours {
		return pathTorn, nil
	}
	if state == forensics.HeaderZeroed {
		return 0, &NotAStoreError{Path: path, Found: "a file whose first 100 bytes are zero and which holds nothing of a sessiondb store"}
	}
	return 0, &NotAStoreError{Path: path, Found: "not a SQLite file (it begins " + quoteStart(path) + ")"}
}

// inspectSQLite reads the schema of a SQLite database through an
// immutable connection: it takes no lock and makes no -shm or -wal, so it
// is harmless on any file. The main file alone is read: a schema still in
// the WAL (a store cut off before its first checkpoint) is looked for in
// the WAL's bytes.
func inspectSQLite(ctx context.Context, path string) (pathState, error) {
	d, err := openDB(path, kindImmutable, 1, "")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	// Hand-written: sqlc cannot see sqlite_schema.
	rows, err := d.QueryContext(ctx, "SELECT type, name FROM sqlite_schema")
	var tables []string
	objects := 0
	if err == nil {
		for rows.Next() {
			var kind, name string
			if err = rows.Scan(&kind, &name); err != nil {
				break
			}
			objects++
			if kind == "table" {
				tables = append(tables, name)
			}
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		if !isDamage(err) {
			return 0, readOnlyHint(path, fmt.Errorf("inspect: %w", mapDriverError(err)))
		}
		// Too damaged to read its schema (or read while a checkpoint
		// rewrites it: an immutable reader takes no lock): ours if our
		// schema's text is still in it or in its WAL.
		if ours, serr := holdsStoreSchema(path); (serr == nil && ours) || walOfAStore(path) {
			return pathStore, nil
		}
		return 0, &NotAStoreError{Path: path, Found: "a SQLite database that cannot be read (" + mapDriverError(err).Error() + ") and holds nothing of a sessiondb store"}
	}
	if objects == 0 {
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Mode().IsRegular() && fi.Size() > forensics.WALHeaderBytes {
			if walOfAStore(path) {
				return pathStore, nil
			}
			return 0, &NotAStoreError{Path: path, Found: "a SQLite database of another program (its tables are still in its -wal)"}
		}
		// No objects: empty unless another program has already marked it
		// as its own with a user_version, which sessiondb never sets (its
		// application_id is sessiondb's own per-file stamp, so that one
		// cannot tell).
		var userVersion int64
		if err := d.QueryRowContext(ctx, "PRAGMA user_version").Scan(&userVersion); err != nil {
			return 0, readOnlyHint(path, fmt.Errorf("inspect: %w", mapDriverError(err)))
		}
		if userVersion != 0 {
			return 0, &NotAStoreError{Path: path, Found: fmt.Sprintf("a SQLite database of another program (no tables yet, user_version %d)", userVersion)}
		}
		return pathEmpty, nil
	}
	has := func(name string) bool { return slices.Contains(tables, name) }
	if has(gooseTable) && has("sessions") && has("messages") {
		return pathStore, nil // the user's own tables beside ours are tolerated
	}
	var foreign []string
	for _, t := range tables {
		if t != gooseTable && !ourTable(t) && !strings.HasPrefix(t, "sqlite_") {
			foreign = append(foreign, t)
		}
	}
	if len(foreign) == 0 && has(gooseTable) {
		// A first migration cut short: goose makes its version table
		// before it applies any migration, so a file with some of our
		// table names and no goose table (another program's "sessions"
		// table, say) is not ours.
		return pathStore, nil
	}
	found := "a SQLite database of another program"
	switch {
	case len(foreign) == 0 && len(tables) > 0:
		found += " (tables: " + strings.Join(tables, ", ") + ", without sessiondb's " + gooseTable + ")"

	case len(foreign) > 8:
		found += " (tables: " + strings.Join(foreign[:8], ", ") + ", …)"
	case len(foreign) > 0:
		found += " (tables: " + strings.Join(foreign, ", ") + ")"
	default:
		found += " (no tables, but other schema objects)"
	}
	return 0, &NotAStoreError{Path: path, Found: found}
}

// gooseTable is the table goose keeps the schema version in.
const gooseTable = "goose_db_version"

// storeMarkers are names that only sessiondb's schema text puts together
// in a file; holdsStoreSchema looks for all of them.
var storeMarkers = [][]byte{[]byte(gooseTable), []byte("messages_fts_trigram"), []byte("CREATE TABLE sessions")}

// markerScanBytes bounds how much of a file holdsStoreSchema reads:
// sqlite_schema is written first, so its text sits near the start.
const markerScanBytes = 8 << 20

// holdsStoreSchema reports whether the first markerScanBytes of the file
// hold sessiondb's schema text: a store whose header (or page 1) was
// damaged still shows it, another program's file does not.
func holdsStoreSchema(path string) (bool, error) {
	f, err := os.Open(path) // a regular file: inspectPath looked
	if err != nil {
		return false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, markerScanBytes))
	if err != nil {
		return false, err
	}
	for _, m := range storeMarkers {
		if !bytes.Contains(b, m) {
			return false, nil
		}
	}
	return true, nil
}

// walOfAStore reports whether the database's -wal holds goose's version
// table: a store being created (its main file still the empty WAL
// database initializeEmpty wrote, its schema in the WAL, the first
// migrations perhaps still running in another process) is ours from
// goose's first commit on, before the rest of the schema is there.
func walOfAStore(path string) bool {
	fi, err := os.Lstat(path + "-wal")
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path + "-wal")
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, markerScanBytes))
	return err == nil && bytes.Contains(b, []byte(gooseTable))
}

// allZero reports whether every byte of the file is zero.
func allZero(path string) (bool, error) {
	f, err := os.Open(path) // a regular file: inspectPath looked
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		if len(bytes.Trim(buf[:n], "\x00")) != 0 {
			return false, nil
		}
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// quoteStart quotes the first bytes of a file, for an error that says
// what the file is.
func quoteStart(path string) string {
	f, err := os.Open(path) // a regular file: inspectPath looked
	if err != nil {
		return "?"
	}
	defer f.Close()
	b := make([]byte, 24)
	n, _ := io.ReadFull(f, b)
	return fmt.Sprintf("%q", b[:n])
}

// describeNonRegular names a file type that cannot hold a database.
func describeNonRegular(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// refuseNoStore is the refusal of a read-only or existing-only Open where
// state says no store is there yet (or only a torn one): it creates
// nothing and changes nothing.
func refuseNoStore(path string, state pathState) error {
	switch state {
	case pathAbsent:
		return fmt.Errorf("%w: no database at %s (a read creates nothing)", ErrNotFound, path)
	case pathEmpty:
		return fmt.Errorf("%w: no store at %s yet: the file holds no data (a write, such as `sessiondb init`, makes a store of it; a read changes nothing)", ErrNotFound, path)
	case pathTorn:
		return fmt.Errorf("%w: %s is a damaged sessiondb store (its header is gone); `sessiondb repair` moves it aside, keeping its bytes, and starts a new one", ErrNotDatabase, path)
	}
	return nil
}
