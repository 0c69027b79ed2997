package pg

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/store/driver"
)

// Routing reads to replicas by hand (Options.Replicas does it within one
// store: readroute.go). Open a Store on the primary for writes and
// one on each replica's DSN for reads (search, listing, conversations):
// the replica's opens read-only by itself. A replica shows what it has
// replayed, which trails the primary by the replication lag, so the
// read-your-writes rule is: a caller's own writes are visible at once
// through the primary store; through a replica only after
// replica.WaitFor(ctx, pos), with pos the primary's Position taken after
// those writes returned. A reader that needs no such guarantee (another
// user's search, a sidebar) reads the replica without waiting.

// Position is a point in the primary's write-ahead log (a pg_lsn, as
// text): the writes acknowledged before it was taken lie before it.
type Position string

// Position returns where the server's write-ahead log stands: on a
// primary, past every write acknowledged so far (pg_current_wal_insert_lsn());
// on a standby, what it has replayed (pg_last_wal_replay_lsn()). Give a
// primary's Position to a replica's WaitFor to read your own writes there.
func (s *Store) Position(ctx context.Context) (Position, error) {
	// Hand-written: server functions, no table sqlc knows.
	var pos string
	err := s.eng.pool.QueryRow(ctx, "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "+
		"ELSE pg_current_wal_insert_lsn() END)::text").Scan(&pos)
	if err != nil {
		return "", fmt.Errorf("position: %w", mapError(err))
	}
	return Position(pos), nil
}

// replayPoll is how often WaitFor asks a standby how far it has replayed.
const replayPoll = 5 * time.Millisecond

// WaitFor waits until the store's server has replayed the primary's write-
// ahead log up to pos, so every write acknowledged before pos was taken is
// visible to this store's reads. On a primary it returns at once. ctx
// bounds the wait (a standby that stopped replaying never gets there);
// its error is returned when it ends first.
func (s *Store) WaitFor(ctx context.Context, pos Position) error {
	if !validPosition(string(pos)) {
		return driver.Invalid("wait for %q: not a position (Store.Position gives one, like 0/3000148)", string(pos))
	}
	for {
		// Hand-written: server functions, no table sqlc knows.
		var done bool
		err := s.eng.pool.QueryRow(ctx, "SELECT NOT pg_is_in_recovery() OR COALESCE(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)",
			string(pos)).Scan(&done)
		if err != nil {
			return fmt.Errorf("wait for %s: %w", pos, mapError(err))
		}
		if done {
			return nil
		}
		if err := sleep(ctx, replayPoll); err != nil {
			return fmt.Errorf("wait for %s: %w", pos, err)
		}
	}
}

// validPosition reports whether pos reads as a pg_lsn: two hexadecimal
// numbers of up to 8 digits joined by a slash.
func validPosition(pos string) bool {
	hi, lo, ok := strings.Cut(pos, "/")
	return ok && hexDigits(hi) && hexDigits(lo)
}

func hexDigits(s string) bool {
	if s == "" || len(s) > 8 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}
