package pg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A read-only Store reads a schema it never writes: one opened with
// Options.ReadOnly, or any store on a hot standby, which Open detects
// (pg_is_in_recovery()) and opens read-only by itself, saying so in a log
// line and in Store.ReadOnly and Store.Standby. Such an open migrates
// nothing and takes no lock; the schema must already be at this build's
// version (a *SchemaBehindError otherwise: migrate the primary, and the
// standby replays it). Reads, searches and snapshots work as on the
// primary, seeing what the standby has replayed so far; every write
// returns ErrReadOnly without reaching the server. A standby promoted
// later stays read-only for stores already open on it: reopen them.

// ErrReadOnly reports a write to a store opened read-only. It is the
// store's sentinel (store.ErrReadOnly).
var ErrReadOnly = driver.ErrReadOnly

// readOnlyReason says why the store on pool must be opened read-only, or
// nil: the server is a hot standby, or the caller asked (Options.ReadOnly).
func readOnlyReason(ctx context.Context, pool *pgxpool.Pool, opts Options) (why error, standby bool, err error) {
	// Hand-written: a server function, before any schema sqlc knows.
	if err := pool.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&standby); err != nil {
		return nil, false, fmt.Errorf("ask the server whether it is a standby: %w", err)
	}
	switch {
	case standby:
		return fmt.Errorf("%w: the server is a hot standby (pg_is_in_recovery()); write through the primary", ErrReadOnly), true, nil
	case opts.ReadOnly:
		return fmt.Errorf("%w: the store was opened with Options.ReadOnly", ErrReadOnly), false, nil
	}
	return nil, false, nil
}

// ReadOnly reports whether the store was opened read-only (on a hot
// standby, or with Options.ReadOnly): every write returns ErrReadOnly.
func (s *Store) ReadOnly() bool { return s.eng.readOnly != nil }

// Standby reports whether the server was a hot standby when the store
// was opened.
func (s *Store) Standby() bool { return s.eng.standby }
