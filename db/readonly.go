package db

import (
	"context"
	"fmt"
	"os"
)

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

// openReadOnly opens a Store that reads through the read-only pool and
// refuses every write with why. Nothing is written at open: no
// migration, no journal-mode switch, no index catch-up, so a file that
// needs any of them is refused.
func openReadOnly(ctx context.Context, path string, opts Options, why error) (*Store, error) {
	readers, err := openDB(path, kindReader, opts.ReadPoolSize, opts.VFS)
	if err != nil {
		return nil, err
	}
	var have int64
	if err := readers.QueryRowContext(ctx, schemaVersionSQL).Scan(&have); err != nil {
		readers.Close()
		return nil, fmt.Errorf("%w (and its schema could not be read: %w)", why, mapDriverError(err))
	}
	if err := refuseNewerVersion(have); err != nil {
		readers.Close()
		return nil, err
	}
	if want := latestMigration(); have < want {
		readers.Close()
		return nil, fmt.Errorf("%w, but its schema (version %d) needs migrating to version %d first", why, have, want)
	}
	opts.Logger.Warn("sessiondb: opened for reading only", "path", path, "reason", why)
	return &Store{path: path, opts: opts, readers: readers, readOnly: why}, nil
}
