package db

// durable.go is the ONLY place in sessiondb that opens a SQLite connection
// (enforced by lint/rawopen). Every connection kind — the writer, the read
// pool, repair and probe connections — is built here from one pragma table,
// so no code path can forget a durability barrier (seed 000: a repair path
// that opened bare connections tore b-tree pages on macOS).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ncruces/go-sqlite3"
	_ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// connKind names what a connection is for; its pragmas follow from it.
type connKind int

const (
	// kindWriter is the Store's single read-write connection.
	kindWriter connKind = iota
	// kindReader is a read-only pooled connection (WAL only).
	kindReader
	// kindRepair is a read-write connection for repair surgery: it carries
	// exactly the writer's barriers (seed 000).
	kindRepair
	// kindProbe is a short-lived read-only connection for health checks.
	kindProbe
	// kindForeign reads another program's database (a Hermes state.db being
	// imported) that may still be in use. mode=ro, never immutable=1: the
	// live WAL must be read, not ignored. A read-only connection cannot
	// checkpoint (SQLite answers SQLITE_READONLY) and closing the last one
	// leaves the WAL as it is, so the owner's log is never touched.
	kindForeign
	// kindImmutable is a read-only connection to a file nothing can
	// change while it is open (see readonly.go).
	kindImmutable
)

func (k connKind) String() string {
	return [...]string{"writer", "reader", "repair", "probe", "foreign source", "immutable reader"}[k]
}

func (k connKind) readOnly() bool {
	return k == kindReader || k == kindProbe || k == kindForeign || k == kindImmutable
}

// Busy timeouts per kind. The writer's is a backstop only: tx.go bounds each
// wait for the write lock by the call's patience through the context.
var busyTimeout = map[connKind]time.Duration{
	kindWriter: 5 * time.Second,
	kindReader: 5 * time.Second,
	kindRepair: 5 * time.Second,
	kindProbe:  1 * time.Second,
	// The source's owner may hold it for seconds (a VACUUM, its WAL
	// recovery after a crash); an import has the time to wait.
	kindForeign: 20 * time.Second,
	// No other connection can hold a lock on an immutable file.
	kindImmutable: 0,
}

// readerCacheKiB is each read connection's page cache (SQLite's default is
// 2 MiB). A relevance search reads every match of its window — messages
// rows, their sessions, bm25's document sizes — scattered over the newest
// part of the file, and at 2 MiB most of those pages came from the OS by a
// read call each: 16 MiB took BenchmarkSearch100k's relevance p50 from
// ~10.5 to ~7.8 ms. The cache fills only as pages are read, so a small
// store never pays for it; a pool of 8 readers on a large one may hold up
// to 128 MiB.
const readerCacheKiB = 16 << 10

// journalSizeLimit caps the WAL file left behind after a checkpoint.
const journalSizeLimit = 64 << 20

// connPragmas returns the per-connection pragmas for a kind on a platform,
// in the order they must run: busy_timeout first (any _pragma in the DSN
// resets the driver's own default busy timeout to zero).
//
// synchronous=FULL everywhere: a transcript store must not lose an
// acknowledged turn to a power cut. On darwin fsync() does not flush the
// drive cache, so fullfsync and checkpoint_fullfsync add F_FULLFSYNC at
// commits and checkpoints (seed 000). journal_mode is deliberately absent:
// it is switched once, under the migration lock (ensureWAL).
func connPragmas(goos string, kind connKind) []string {
	p := []string{"busy_timeout(" + strconv.FormatInt(busyTimeout[kind].Milliseconds(), 10) + ")"}
	if kind == kindReader || kind == kindImmutable {
		p = append(p, "cache_size("+strconv.Itoa(-readerCacheKiB)+")")
	}
	if kind.readOnly() {
		return append(p, "query_only(1)")
	}
	if kind == kindRepair {
		// Before anything reads the schema: a malformed schema (a
		// duplicate row) must not stop the connection that mends it.
		p = append(p, "writable_schema(1)")
	}
	p = append(p,
		"synchronous(FULL)",
		"foreign_keys(1)",
		"journal_size_limit("+strconv.Itoa(journalSizeLimit)+")",
	)
	if goos == "darwin" || goos == "ios" {
		p = append(p, "fullfsync(1)", "checkpoint_fullfsync(1)")
	}
	return p
}

// dsn builds the driver's data source name: a file: URI (built with
// net/url, so any path is escaped correctly) with the kind's pragmas, on
// the named VFS (empty: the operating system's).
func dsn(path string, kind connKind, vfsName string) string {
	slashed := filepath.ToSlash(path)
	if !strings.HasPrefix(slashed, "/") {
		slashed = "/" + slashed // a Windows volume path: file:/C:/x
	}
	q := url.Values{}
	for _, p := range connPragmas(runtime.GOOS, kind) {
		q.Add("_pragma", p)
	}
	if kind.readOnly() {
		q.Set("mode", "ro")
		q.Set("_txlock", "deferred")
		if kind == kindImmutable {
			q.Set("immutable", "1")
		}
	} else {
		// BEGIN IMMEDIATE: a deferred transaction that upgrades to a write
		// gets SQLITE_BUSY without the busy handler ever running.
		q.Set("_txlock", "immediate")
	}
	if vfsName != "" {
		q.Set("vfs", vfsName)
	}
	u := url.URL{Scheme: "file", Path: slashed, RawQuery: q.Encode()}
	return u.String()
}

var registerOnce sync.Once

// registerExtensions makes FTS5 available on every connection. FTS5 is not
// in the driver's default build; it must be registered before the first
// connection opens.
func registerExtensions() {
	registerOnce.Do(func() { sqlite3.AutoExtension(fts5.Register) })
}

// openDB opens a *sql.DB of one kind. The writer and repair kinds get a
// single connection (SQLite has one writer; a second pooled connection
// would only contend with the first).
func openDB(path string, kind connKind, poolSize int, vfsName string) (*sql.DB, error) {
	registerExtensions()
	d, err := sql.Open("sqlite3", dsn(path, kind, vfsName))
	if err != nil {
		return nil, fmt.Errorf("open %s connection: %w", kind, err)
	}
	if kind.readOnly() {
		d.SetMaxOpenConns(poolSize)
		d.SetMaxIdleConns(poolSize)
	} else {
		d.SetMaxOpenConns(1)
		d.SetMaxIdleConns(1)
	}
	d.SetConnMaxLifetime(0)
	d.SetConnMaxIdleTime(0)
	return d, nil
}

// prepareFile makes sure path can hold the database before SQLite touches
// it: the directory exists (0700 when created), a new main file is created
// 0600 with O_EXCL|O_NOFOLLOW, and an existing one is tightened to 0600
// with chmod on the path (never open+close: closing a descriptor drops the
// process's POSIX locks on the file). A symlink or a directory at the path
// is refused at once, and so is a directory we cannot write.
func prepareFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return readOnlyHint(path, fmt.Errorf("create directory: %w", err))
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := createExclusive(path)
		if errors.Is(err, fs.ErrExist) {
			return prepareFile(path) // another opener created it first
		}
		if err != nil {
			return readOnlyHint(path, fmt.Errorf("create database file: %w", err))
		}
		return f.Close() // new, empty and unlocked: nothing to drop yet
	case err != nil:
		return fmt.Errorf("inspect %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link; open the real file instead so the 0600 and lock guarantees hold", ErrInvalidInput, path)
	case fi.IsDir():
		return fmt.Errorf("%w: %s is a directory, not a database file; point --db (or SESSIONDB_PATH) at a file inside it", ErrInvalidInput, path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file", ErrInvalidInput, path)
	}
	if err := writable(dir); err != nil {
		return readOnlyHint(path, err)
	}
	tightenMode(path)
	return nil
}

// tightenSidecars applies 0600 to the database and its WAL and shared
// memory files, by path. Files that do not exist (yet) are skipped.
func tightenSidecars(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		tightenMode(p)
	}
}

func tightenMode(p string) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() == 0o600 {
		return
	}
	_ = os.Chmod(p, 0o600) // best effort: a file we do not own keeps its mode
}

func readOnlyHint(path string, err error) error {
	if errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("%w: %s: %w (the filesystem is mounted read-only; open with Options.ReadOnly to read it — the CLI's read commands do)",
			ErrReadOnly, path, err)
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: %s: %w (make its directory writable for this user, e.g. chmod u+rwx %s, or choose another --db path)",
			ErrReadOnly, path, err, filepath.Dir(path))
	}
	return fmt.Errorf("%s: %w", path, err)
}

// The pragmas below are hand-written because sqlc cannot express PRAGMA
// statements; they belong to connection setup, so they live here.

// journalMode reads the journal mode recorded for the file.
func journalMode(ctx context.Context, c *sql.Conn) (string, error) {
	var mode string
	err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	return strings.ToLower(mode), err
}

// ensureWAL switches the file to WAL once; callers hold the migration lock.
// A file already in WAL is left alone. When the filesystem refuses WAL
// (network filesystems answer with the old mode instead of an error) the
// store runs in DELETE mode and reads go through the writer. A WAL file is
// never switched back to DELETE.
func ensureWAL(ctx context.Context, c *sql.Conn) (wal bool, err error) {
	mode, err := journalMode(ctx, c)
	if err != nil {
		return false, fmt.Errorf("read journal mode: %w", err)
	}
	if mode == "wal" {
		return true, nil
	}
	if err := c.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		if isLockError(err) || isSyncFailure(err) || isDiskFull(err) {
			return false, err // not a refusal: the switch failed to reach the disk
		}
		return false, nil // refused: keep the current mode
	}
	return strings.EqualFold(mode, "wal"), nil
}

// checkpointPassive copies committed WAL frames into the main file without
// waiting for or blocking anyone. TRUNCATE is never used on a live shared
// file: it waits for every reader and can stall sibling processes.
func checkpointPassive(ctx context.Context, c *sql.Conn) error {
	_, _, err := walCheckpoint(ctx, c, "PASSIVE")
	return err
}
