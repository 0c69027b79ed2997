package forensics

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/sessiondb/sessiondb/internal/fsx"
)

// QuarantineTorn moves a torn database aside before SQLite opens it: a
// file whose header is all zero bytes, or a zero-length file whose WAL
// holds data. A plain zero-length file is a database never initialised
// (package db's prepareFile makes one) and is initialised in place. The
// caller holds the migration lock, so no other opener is initialising the
// file.
func QuarantineTorn(path string, log *slog.Logger) error {
	state, why, err := ReadHeader(path)
	if err != nil {
		return err
	}
	kind := ""
	switch {
	case state == HeaderZeroed:
		kind = "zeroed"
	case state == HeaderEmpty:
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
			kind, why = "emptied", "empty main file beside a non-empty WAL"
		}
	}
	if kind == "" {
		return nil
	}
	owner, known := fsx.FileOwner(path)
	dst, err := MoveAside(path, kind)
	if err != nil {
		return err
	}
	log.Error("sessiondb: the database file was damaged ("+why+") and has been moved aside; a fresh database is created in its place",
		"path", path, "moved_to", dst)
	f, err := fsx.CreateExclusive(path)
	if err != nil {
		return fmt.Errorf("create a fresh %s: %w", path, err)
	}
	if known { // the fresh file keeps the mode the torn one had
		fsx.GiveTo(f, owner)
	}
	return f.Close()
}
