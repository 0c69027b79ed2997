package db

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Migrations as a deploy step. By default every Open migrates the file it
// opens, which suits one process on one machine. A fleet that rolls out
// new builds migrates once, as a step of its own, and opens with
// Options.NoMigrate so that a build started against a file it would have
// to migrate fails at once (ErrSchemaBehind) instead of migrating under
// the old build's processes:
//
//	sessiondb migrate --status --db state.db   # exit 0 current, 4 behind
//	sessiondb migrate --db state.db            # the deploy step
//	db.Open(ctx, "state.db", db.Options{NoMigrate: true})

// Migrate brings the store at path to this build's schema version, creating
// the file when there is none, and reports the versions before and after.
// It is Open followed by Close: it waits for other processes' locks as Open
// does (Options.OpenPatience), and migrating a file already current changes
// nothing. Options.ReadOnly and Options.NoMigrate are refused: they forbid
// what Migrate is for.
func Migrate(ctx context.Context, path string, opts Options) (Migration, error) {
	if opts.ReadOnly || opts.NoMigrate {
		return Migration{}, opErr("migrate", "", invalid("Migrate cannot run with Options.ReadOnly or Options.NoMigrate"))
	}
	s, err := Open(ctx, path, opts)
	if err != nil {
		return Migration{}, err
	}
	m := s.w.migration
	return m, s.Close()
}

// SchemaVersion reports the schema version of the store at path against
// this build's, reading the file without writing it (no migration, no
// lock taken, nothing created). A missing file is ErrNotFound; a file that
// is not a SQLite database ErrNotDatabase.
func SchemaVersion(ctx context.Context, path string) (SchemaStatus, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return SchemaStatus{}, opErr("schema version", "", err)
	}
	st := SchemaStatus{Where: abs, Latest: latestMigration()}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, opErr("schema version", "", fmt.Errorf("%w: no database at %s", ErrNotFound, abs))
	case err != nil:
		return st, opErr("schema version", "", err)
	case !fi.Mode().IsRegular():
		return st, opErr("schema version", "", fmt.Errorf("%w: %s is not a regular file", ErrInvalidInput, abs))
	}
	state, why, err := readHeader(abs)
	switch {
	case err != nil:
		return st, opErr("schema version", "", readOnlyHint(abs, err))
	case state == headerEmpty:
		return st, nil // an empty file is a store not yet migrated
	case state != headerSQLite:
		return st, opErr("schema version", "", fmt.Errorf("%w: %s: %s", ErrNotDatabase, abs, why))
	}
	probe, err := openDB(abs, kindProbe, 1, "")
	if err != nil {
		return st, opErr("schema version", "", describeOpenError(abs, err))
	}
	defer probe.Close()
	if st.Version, err = fileVersion(ctx, probe); err != nil {
		return st, opErr("schema version", "", describeOpenError(abs, err))
	}
	return st, nil
}
