package db

import (
	"context"
	"fmt"
	"path/filepath"
)

// Migrations as a deploy step. By default every Open migrates the file it
// opens, which suits one process on one machine. A fleet that rolls out
// new builds migrates once, as a step of its own, and opens with
// Options.NoMigrate so that a build started against a file it would have
// to migrate fails at once (ErrSchemaBehind) instead of migrating under
// the old build's processes:
//
//	sessiondb migrate --status --db state.db   # exit 0 current, 1 behind or ahead
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
// this build's, reading the file without writing it: no migration, no
// write lock, no database created (a read connection, as any reader's,
// may leave SQLite's shared-memory file beside a WAL-mode store). A missing file is ErrNotFound, an empty
// one version 0, a damaged store ErrNotDatabase, and anything that is not
// a store (a text file, another program's database, a directory) a
// NotAStoreError, left as it was.
func SchemaVersion(ctx context.Context, path string) (SchemaStatus, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return SchemaStatus{}, opErr("schema version", "", err)
	}
	st := SchemaStatus{Where: abs, Latest: latestMigration()}
	// As Open does, before SQLite touches the file: what is not a store
	// is refused and left as it was.
	state, err := inspectPath(ctx, abs, "")
	if err != nil {
		return st, opErr("schema version", "", err)
	}
	switch state {
	case pathAbsent:
		return st, opErr("schema version", "", fmt.Errorf("%w: no database at %s", ErrNotFound, abs))
	case pathEmpty:
		return st, nil // a store not yet made: version 0
	case pathTorn:
		return st, opErr("schema version", "", fmt.Errorf("%w: %s is a damaged store (its header is gone); sessiondb repair mends it", ErrNotDatabase, abs))
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
