package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ForeignFile is another program's SQLite file (a Hermes state.db) opened
// for reading only and read in one snapshot: a process writing it meanwhile
// is neither seen half-way nor disturbed. Nothing is ever written to it:
// it is not migrated, its WAL is read and never checkpointed, and no side
// file is created beside it (see OpenForeign).
type ForeignFile struct {
	db *sql.DB
	tx *sql.Tx
}

// OpenForeign opens the SQLite file at path for reading only and starts
// its snapshot. A file whose header says WAL but that has no -wal beside
// it (its owner closed it cleanly, or it was copied alone) has no log to
// replay: it is read as immutable, so SQLite makes no -shm beside it.
// Otherwise it is read through the owner's WAL and shared memory
// (mode=ro), which a live owner keeps and which an immutable read would
// ignore. No file at path is ErrNotFound; a directory or other non-file is
// ErrInvalidInput; a file that is not SQLite fails when first read.
func OpenForeign(ctx context.Context, path string) (*ForeignFile, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: no file at %s", ErrNotFound, abs)
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrInvalidInput, abs)
	}
	kind := kindForeign
	if _, err := os.Lstat(abs + "-wal"); errors.Is(err, fs.ErrNotExist) && walHeader(abs) {
		kind = kindImmutable
	}
	d, err := openDB(abs, kind, 1, "")
	if err != nil {
		return nil, err
	}
	tx, err := d.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		d.Close()
		return nil, sharedMemoryHint(mapDriverError(err))
	}
	return &ForeignFile{db: d, tx: tx}, nil
}

// sharedMemoryHint explains a read-only refusal: even a reader of a WAL
// database writes the -shm file beside it (read marks), so a file owned by
// someone else, or in a directory this user cannot write, cannot be read
// live. Reading it as immutable would ignore its WAL, so it is not tried.
func sharedMemoryHint(err error) error {
	if !errors.Is(err, ErrReadOnly) {
		return err
	}
	return fmt.Errorf("%w (a WAL database is read through its -shm file, which this user cannot write or create: run as the file's owner, or import a copy of the file made together with its -wal)", err)
}

// Query runs q in the snapshot and returns its rows by column name: int64,
// float64, string, []byte or nil, as the file stores them. The SQL is the
// caller's: it reads another program's schema.
func (f *ForeignFile) Query(ctx context.Context, q string, args ...any) ([]map[string]any, error) {
	rows, err := f.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, sharedMemoryHint(mapDriverError(err))
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, mapDriverError(err)
		}
		r := make(map[string]any, len(names))
		for i, n := range names {
			r[n] = vals[i]
		}
		out = append(out, r)
	}
	return out, mapDriverError(rows.Err())
}

// Close ends the snapshot and closes the connection.
func (f *ForeignFile) Close() error {
	f.tx.Rollback()
	return f.db.Close()
}
