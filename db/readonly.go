package db

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sessiondb/sessiondb/db/internal/forensics"
	"github.com/sessiondb/sessiondb/db/internal/readonlywal"
	"github.com/sessiondb/sessiondb/internal/fsx"
)

// A read-only Store (Options.ReadOnly) reads a file it will never write:
// on a read-only mount, in a directory this user cannot write, or where
// the caller only means to look. It opens no writer, applies no
// migration, takes no migration lock and creates no database file (only
// the -shm SQLite needs to read a WAL file, made by prepareSidecars with
// the database's mode where the directory allows it); every write returns
// ErrReadOnly.
//
// Reading a WAL-mode file normally needs its shared-memory file (-shm),
// which SQLite creates beside it. Where the directory cannot hold one and
// none exists that this user may write, the file is opened with SQLite's
// immutable=1: no locks, no shared memory, the main file taken as it is.
// That is only safe while nothing writes the file. A read-only mount
// guarantees it; a read-only directory does not (its owner's process may
// open the file for writing meanwhile, and an immutable reader could then
// see a half-written page and fail), so Open logs a warning in that case.
// An immutable reader cannot replay a WAL, so a file whose WAL still holds
// committed writes is refused instead of shown without them.

// errStoreReadOnly is what every write on a Store opened with
// Options.ReadOnly returns.
var errStoreReadOnly = fmt.Errorf("%w: the store was opened with Options.ReadOnly", ErrReadOnly)

// readOnlyReason says why the database at path must be opened for reading
// only, or nil. A file whose owner has no write permission (0400) was made
// read-only on purpose, and root, who could write it anyway, does not;
// a file owned by another user is never written (ForeignOwnerError).
func readOnlyReason(path string) error {
	if err := refuseForeignOwner(path); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o200 == 0 {
		return fmt.Errorf("%w: %s is mode %04o, so it was opened for reading only (chmod u+w to write it)",
			ErrReadOnly, path, fi.Mode().Perm())
	}
	return nil
}

// refuseForeignOwner refuses to write a database another user owns:
// every -wal and -shm this process created would be its own, 0600, and
// lock the owner out of their own file. Root is held to it too.
func refuseForeignOwner(path string) error {
	if uid, foreign := fsx.ForeignOwner(path); foreign {
		return &ForeignOwnerError{Path: path, Owner: uid, User: os.Geteuid()}
	}
	return nil
}

// openReadOnly opens the Store at abs for reading only; every write
// returns why.
func openReadOnly(ctx context.Context, abs string, opts Options, why error) (*Store, error) {
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: no database at %s (a read-only open creates nothing)", ErrNotFound, abs)
	case err != nil:
		return nil, fmt.Errorf("inspect %s: %w", abs, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrInvalidInput, abs)
	}
	if err := refuseAliased(abs); err != nil {
		return nil, err
	}
	if state, why, err := forensics.ReadHeader(abs); err != nil {
		return nil, readOnlyHint(abs, err)
	} else if state != forensics.HeaderSQLite {
		return nil, fmt.Errorf("%w: %s: %s", ErrNotDatabase, abs, why)
	}
	kind, err := readOnlyKind(abs, opts.Logger)
	if err != nil {
		return nil, err
	}
	readers, err := openDB(abs, kind, opts.ReadPoolSize, readOnlyVFS(opts))
	if err != nil {
		return nil, err
	}
	var have int64
	if err := readers.QueryRowContext(ctx, schemaVersionSQL).Scan(&have); err != nil {
		readers.Close()
		return nil, describeOpenError(abs, fmt.Errorf("read the schema version: %w", err))
	}
	if err := refuseNewerVersion(have); err != nil {
		readers.Close()
		return nil, err
	}
	if want := latestMigration(); have < want {
		readers.Close()
		return nil, fmt.Errorf("%w: %s is at schema version %d and needs migrating to %d, which a read-only open cannot do; open it once for writing",
			ErrReadOnly, abs, have, want)
	}
	if why != errStoreReadOnly { // asked for, it needs no warning
		opts.Logger.Warn("sessiondb: opened for reading only", "path", abs, "reason", why)
	}
	return (&engine{path: abs, opts: opts, readers: readers, readStmts: newReadStmts(readers), readOnly: why}).store()
}

// readOnlyKind picks the connection kind for a read-only Store: a plain
// reader where a shared-memory file can be used, else an immutable one
// (see above), refused when the WAL holds writes it could not see.
func readOnlyKind(path string, log *slog.Logger) (connKind, error) {
	dirErr := fsx.Writable(filepath.Dir(path))
	if dirErr == nil || fsx.CanWrite(path+"-shm") {
		return kindReader, nil
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > forensics.WALHeaderBytes {
		return 0, fmt.Errorf("%w: %s-wal holds %d bytes of writes not yet copied into %s, and without a writable directory they cannot be read; "+
			"mount it read-write once (or copy the database and its -wal to a writable place) to read them",
			ErrReadOnly, path, fi.Size(), filepath.Base(path))
	}
	if !errors.Is(dirErr, syscall.EROFS) {
		log.Warn("sessiondb: the directory cannot hold the shared-memory file; reading the database as immutable — "+
			"if another process writes it meanwhile, reads may fail or miss its writes", "path", path, "err", dirErr)
	}
	return kindImmutable, nil
}

// readOnlyVFS is the VFS a read-only Store reads through: the caller's,
// or readonlywal.VFS in place of the driver's own (a -wal this user may
// not write is opened for reading).
func readOnlyVFS(opts Options) string {
	if opts.VFS != "" {
		return opts.VFS
	}
	return readonlywal.VFS
}
