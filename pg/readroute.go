package pg

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Routing reads to replicas within one store. Options.Replicas names hot
// standbys of the primary; Open connects to each, and the store's reads
// (listings, conversations, search, snapshots) go to them in turn, while
// every write goes to the primary. The read-your-writes rule: a read sees
// every write this Store acknowledged before the read began, and every
// change its watchers were told of. A replica that has not replayed that
// far yet (the store asks the primary where its log stands, then the
// replica whether it got there) is skipped and the read goes to the
// primary; once a replica has caught up, reads go there without asking
// again until the store writes anew. Writes of other processes appear
// through a replica with the replication lag, as through any standby.

// replica is a hot standby the store reads from.
type replica struct {
	pool *pgxpool.Pool
	pin  string // pinSchema for the replica's connection string
	// seen is the engine's wrote count the replica was last found to have
	// replayed: reads go there without asking while it is current.
	seen atomic.Uint64
}

// readRoute is the engine's routing state; the zero value routes every
// read to the primary.
type readRoute struct {
	replicas []*replica
	next     atomic.Uint32
	// wrote counts the writes this store acknowledged, and the changes
	// its change feed announced: each makes the replicas prove again that
	// they have replayed the primary's log to where it stands.
	wrote atomic.Uint64
	// onReplica and onPrimary count the routed reads (tests, metrics).
	onReplica, onPrimary atomic.Int64
}

// readPool is where a read goes: a replica that has replayed everything
// this store wrote or was told of, else the primary. pin is the pool's
// pinSchema.
func (d pgDriver) readPool(ctx context.Context) (pool *pgxpool.Pool, pin string) {
	rr := &d.route
	if len(rr.replicas) == 0 {
		return d.pool, d.pin
	}
	r := rr.replicas[int(rr.next.Add(1))%len(rr.replicas)]
	wrote := rr.wrote.Load()
	if r.seen.Load() >= wrote || r.caughtUp(ctx, d.pool) {
		for seen := r.seen.Load(); seen < wrote && !r.seen.CompareAndSwap(seen, wrote); seen = r.seen.Load() {
		}
		rr.onReplica.Add(1)
		return r.pool, r.pin
	}
	rr.onPrimary.Add(1)
	return d.pool, d.pin
}

// caughtUp asks the primary where its log stands (after every write
// acknowledged so far), then the replica whether it has replayed that
// far. An error on either side routes the read to the primary.
func (r *replica) caughtUp(ctx context.Context, primary *pgxpool.Pool) bool {
	// Hand-written: server functions, no table sqlc knows.
	var pos string
	if err := primary.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&pos); err != nil {
		return false
	}
	var done bool
	err := r.pool.QueryRow(ctx, "SELECT COALESCE(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)", pos).Scan(&done)
	return err == nil && done
}

// openReplicas connects to each replica DSN in schema, waits (within
// ctx) until each has replayed the primary's log as it stands now, so
// the schema Open just migrated is there, and checks the store there as
// a read-only open does.
func openReplicas(ctx context.Context, primary *pgxpool.Pool, dsns []string, schema string, trusted []string) ([]*replica, error) {
	var out []*replica
	fail := func(err error) ([]*replica, error) {
		for _, r := range out {
			r.pool.Close()
		}
		return nil, err
	}
	for _, dsn := range dsns {
		pool, err := newPool(ctx, dsn, schema, defaultMaxConns)
		if err != nil {
			return fail(fmt.Errorf("replica: %w", err))
		}
		r := &replica{pool: pool, pin: pinSchema(pool.Config(), schema)}
		out = append(out, r)
		var standby bool
		if err := pool.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&standby); err != nil {
			return fail(fmt.Errorf("replica: %w", err))
		}
		if !standby {
			return fail(fmt.Errorf("%w: Options.Replicas names a server that is not a hot standby "+
				"(pg_is_in_recovery() is false); name the primary's standbys", ErrInvalidConfig))
		}
		for !r.caughtUp(ctx, primary) {
			if err := sleep(ctx, replayPoll); err != nil {
				return fail(fmt.Errorf("replica: wait for it to replay the primary's log: %w", err))
			}
		}
		if err := openWithoutMigrating(ctx, pool, schema, trusted, "a replica is never migrated (the primary is)"); err != nil {
			return fail(fmt.Errorf("replica: %w", err))
		}
	}
	return out, nil
}
