package db

// durable.go is the ONLY place in sessiondb that opens a SQLite connection
// (enforced by lint/rawopen). Every connection kind — the writer, the read
// pool, repair and probe connections — is built here from one pragma table,
// so no code path can forget a durability barrier (a repair path that
// opened bare connections would tear b-tree pages on macOS, where only
// F_FULLFSYNC reaches the platter).

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

	"github.com/sessiondb/sessiondb/internal/rawconn"

	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/ext/fts5"

	"github.com/sessiondb/sessiondb/db/internal/forensics"
	"github.com/sessiondb/sessiondb/internal/fsx"
)

// connKind names what a connection is for; its pragmas follow from it.
type connKind int

const (
	// kindWriter is the Store's single read-write connection.
	kindWriter connKind = iota
	// kindReader is a read-only pooled connection (WAL only).
	kindReader
	// kindRepair is a read-write connection for repair surgery: it carries
	// exactly the writer's barriers: it rewrites the file.
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
// commits and checkpoints. journal_mode is deliberately absent:
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
	// A -wal or -journal SQLite creates itself (one deleted by the last
	// connection of another process just after prepareSidecars looked, a
	// new file on another VFS) takes the database file's mode and owner at
	// once, not the umask's 0644 or 0666.
	q.Set("modeof", path)
	// SQLite decodes %HH in a URI's parameters but not '+': spaces (in
	// modeof's path) must be %20. A literal '+' is already %2B.
	u := url.URL{Scheme: "file", Path: slashed, RawQuery: strings.ReplaceAll(q.Encode(), "+", "%20")}
	return u.String()
}

var registerOnce sync.Once

// registerExtensions makes FTS5 with sessiondb's ranking function
// (search_rank.go) and sessiondb's SQL functions (sqlfuncs.go) available
// on every connection. FTS5 is not in the
// driver's default build; both must be registered before the first
// connection opens.
func registerExtensions() {
	registerOnce.Do(func() {
		sqlite3.AutoExtension(func(c *sqlite3.Conn) error { return fts5.RegisterCustom(c, registerRank) })
		sqlite3.AutoExtension(registerFunctions)
	})
}

// stablePlans turns on SQLite's query planner stability guarantee
// (SQLITE_DBCONFIG_ENABLE_QPSG) on each connection openDB opens — not on
// the host program's own: a statement's plan never depends on the values
// bound to it. Without it SQLite reads the value bound to a LIMIT while
// planning and marks the statement to be compiled again whenever that
// parameter is bound anew, which database/sql does on every run: a kept
// statement (stmtcache.go, readstmts.go) was compiled on every use all the
// same, two fifths of a short read's time. No query of sessiondb's wants a
// plan shaped by a bound value: the one LIKE on a parameter (repair.go)
// reads sqlite_schema, which has no index, and no ANALYZE statistics are
// kept (the plans of every query in db/gen were compared with and without
// it, binding 1, 20 and 2,000: only a LIMIT 1 sessions list changed, to the
// plan it has at 20).
func stablePlans(c *sqlite3.Conn) error {
	_, err := c.Config(sqlite3.DBCONFIG_ENABLE_QPSG, true)
	return err
}

func init() {
	// The benchmarks' raw-driver baseline opens through here too
	// (internal/rawconn): the writer's and the readers' connections, bare.
	rawconn.Open = func(path string, readOnly bool) (*sql.DB, error) {
		if readOnly {
			return openDB(path, kindReader, 1, "")
		}
		return openDB(path, kindWriter, 1, "")
	}
}

// openDB opens a *sql.DB of one kind. The writer and repair kinds get a
// single connection (SQLite has one writer; a second pooled connection
// would only contend with the first).
func openDB(path string, kind connKind, poolSize int, vfsName string) (*sql.DB, error) {
	registerExtensions()
	// Not for a file that is not ours (an import's source) nor one read
	// as immutable (no sidecar is used, and its medium may be read-only).
	if kind != kindForeign && kind != kindImmutable {
		if err := prepareSidecars(path); err != nil {
			return nil, fmt.Errorf("open %s connection: %w", kind, err)
		}
	}
	d, err := sqlitedriver.Open(dsn(path, kind, vfsName), stablePlans)
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
// it: the directory exists (0700 when created) and a new main file is
// created 0600 with O_EXCL|O_NOFOLLOW. An existing file keeps its mode,
// whatever it is: a group-shared 0640 store stays 0640, and its side
// files follow it (prepareSidecars). A symlink or a directory at the path
// is refused at once, and so is a directory we cannot write. Open calls it
// only once inspectPath found a store, an empty file or nothing there.
func prepareFile(path string) (created bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, readOnlyHint(path, fmt.Errorf("create directory: %w", err))
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := fsx.CreateExclusive(path)
		if errors.Is(err, fs.ErrExist) {
			return prepareFile(path) // another opener created it first
		}
		if err != nil {
			return false, readOnlyHint(path, fmt.Errorf("create database file: %w", err))
		}
		return true, f.Close() // new, empty and unlocked: nothing to drop yet
	case err != nil:
		return false, fmt.Errorf("inspect %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return false, fmt.Errorf("%w: %s is a symbolic link; open the real file instead so the 0600 and lock guarantees hold", ErrInvalidInput, path)
	case fi.IsDir():
		return false, fmt.Errorf("%w: %s is a directory, not a database file; point --db (or SESSIONDB_PATH) at a file inside it", ErrInvalidInput, path)
	case !fi.Mode().IsRegular():
		return false, fmt.Errorf("%w: %s is not a regular file", ErrInvalidInput, path)
	}
	if err := fsx.Writable(dir); err != nil {
		return false, readOnlyHint(path, err)
	}
	return false, nil
}

// prepareSidecars creates the WAL and shared-memory files 0600 with
// O_EXCL|O_NOFOLLOW before SQLite first opens them, then gives them the
// database file's mode and owner (as SQLite's modeof does): the driver
// would create them with the umask's mode (0644, or 0666 under umask
// 000), and a process of another user that opened one in that moment
// keeps reading every transcript written through it, whatever chmod
// follows; a 0600 store's side files are never more open than 0600. It runs
// before every connection (openDB), so Open, Verify, Repair and the
// CLI's commands all get it. An empty -wal and a zero-length -shm are
// what SQLite itself leaves after a checkpoint: valid for read-write and
// read-only connections alike. The -wal is made only for a file whose
// header says WAL: a -wal beside a rollback-journal file would switch it
// to WAL, and SQLite deletes one beside an empty file (initializeEmpty
// gives a new file its WAL header first). Run as root on another user's file, the new
// files are given to that user, so root never locks the owner out of
// their own database. A -wal or -shm that is not a regular file (a FIFO
// would hang SQLite's read) is refused. Reading the header opens and
// closes the main file, which is safe here: this driver's locks (OFD or
// flock) belong to its own descriptors, not to the process.
func prepareSidecars(path string) error {
	for _, side := range []string{"-wal", "-shm"} {
		if err := refuseNonRegular(path + side); err != nil {
			return err
		}
	}
	owner, ok := fsx.FileOwner(path)
	if !ok {
		return nil // absent: created by prepareFile or refused before SQLite runs
	}
	if owner.BelongsToAnotherUser() {
		// Another user's file, read by this one: a sidecar made here would
		// be this user's, 0600, and lock its owner out. SQLite makes what
		// it needs (the file's owner chose the directory's modes).
		return nil
	}
	sides := []string{"-shm"}
	if walHeader(path) {
		sides = append(sides, "-wal")
	}
	for _, side := range sides {
		f, err := fsx.CreateExclusive(path + side)
		switch {
		case errors.Is(err, fs.ErrExist), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
			continue // there already, or a directory SQLite cannot write either
		case err != nil:
			return fmt.Errorf("create %s: %w", path+side, err)
		}
		fsx.GiveTo(f, owner)
		if err := f.Close(); err != nil {
			return fmt.Errorf("create %s: %w", path+side, err)
		}
	}
	return nil
}

// emptyWAL is a new, empty database already in WAL mode, made once per
// process by SQLite itself in a private directory.
var emptyWAL struct {
	once sync.Once
	b    []byte
	err  error
}

func emptyWALDatabase() ([]byte, error) {
	emptyWAL.once.Do(func() {
		dir, err := os.MkdirTemp("", "sessiondb-new-")
		if err != nil {
			emptyWAL.err = err
			return
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "new.db")
		d, err := openDB(p, kindWriter, 1, "")
		if err != nil {
			emptyWAL.err = err
			return
		}
		// Hand-written: a pragma. Closing checkpoints the header into p.
		var mode string
		err = d.QueryRow("PRAGMA journal_mode=WAL").Scan(&mode)
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			emptyWAL.b, err = os.ReadFile(p)
		}
		if err == nil && (!strings.EqualFold(mode, "wal") || len(emptyWAL.b) < 100 || emptyWAL.b[18] != 2) {
			err = fmt.Errorf("journal mode %q, %d bytes", mode, len(emptyWAL.b))
		}
		emptyWAL.err = err
	})
	if emptyWAL.err != nil {
		return nil, fmt.Errorf("make an empty WAL database: %w", emptyWAL.err)
	}
	return emptyWAL.b, nil
}

// initializeEmpty turns the zero-length file this Open created
// (prepareFile) into an empty WAL database before SQLite first reads it,
// then makes its sidecars (prepareSidecars). SQLite would instead delete
// any -wal it found beside an empty file and create its own with the
// umask's mode; a file that is already WAL uses the 0600 -wal made here.
// The bytes are written past SQLite's locks, so only into a file no one
// else can be using: one this Open created, that is still empty, that no
// other process has open (where the OS can tell), under the migration
// lock the caller holds. And only on the operating system's VFS: another
// VFS (a test harness, one refusing WAL) initialises the file its own way.
func initializeEmpty(path string, created bool, vfsName string) error {
	if fi, err := os.Lstat(path); !created || vfsName != "" || err != nil || fi.Size() != 0 {
		return nil
	}
	if who, _ := otherOpeners(path); len(who) > 0 {
		return nil
	}
	b, err := emptyWALDatabase()
	if err != nil {
		return err
	}
	f, err := openSideFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		f.Close()
		return fmt.Errorf("initialise %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("initialise %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return prepareSidecars(path)
}

// walHeader reports whether the database file's header marks it as a WAL
// database (read and write versions 2, at offsets 18 and 19).
func walHeader(path string) bool {
	f, err := openSideFile(path, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [20]byte
	if _, err := f.ReadAt(b[:], 0); err != nil {
		return false
	}
	return string(b[:16]) == string(forensics.SQLiteHeader) && b[18] == 2 && b[19] == 2
}

// alignSidecars gives the WAL and shared-memory files the database
// file's permission bits (with read and write for the owner: see
// fsx.Owner.SideFilePerm), as SQLite gives the files it creates: one left
// wider by another program (0644 beside a 0600 store) is narrowed, one
// left narrower (0600 beside a 0640 group-shared store, by an older
// sessiondb) widened to what the owner chose for the database. The
// database file itself is never changed. Each side file is changed
// through a descriptor opened with O_NOFOLLOW, so nothing planted at its
// path redirects the chmod; files that do not exist (yet), or that this
// user does not own, are left as they are.
func alignSidecars(path string) {
	owner, ok := fsx.FileOwner(path)
	if !ok {
		return
	}
	for _, side := range []string{"-wal", "-shm"} {
		sfi, err := os.Lstat(path + side)
		if err != nil || !sfi.Mode().IsRegular() || sfi.Mode().Perm() == owner.SideFilePerm() {
			continue
		}
		if f, err := openSideFile(path+side, os.O_RDONLY, 0); err == nil {
			_ = f.Chmod(owner.SideFilePerm()) // best effort: another user's file keeps its mode
			f.Close()
		}
	}
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
