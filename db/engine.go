package db

import (
	"context"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/store/driver"
)

// The SQLite engine's side of the seam: the domain's transactions run on
// the engine's write path (tx.go) and read pool, through executors over
// sqlc's queries.

// sqliteDriver is the engine as the domain sees it. It is a type of its
// own so the driver's methods are not promoted onto Store, which embeds
// the engine.
type sqliteDriver struct{ *engine }

var _ driver.Driver = sqliteDriver{}

// Close closes the engine (see engine.close).
func (d sqliteDriver) Close() error { return d.close() }

// Write runs fn as one write transaction: group commit, patience and
// retries are tx.go's.
func (s sqliteDriver) Write(ctx context.Context, patience time.Duration, fn func(context.Context, driver.Executor) error) error {
	return s.writeTx(ctx, patience, func(ctx context.Context, tx gen.DBTX) error {
		return fn(ctx, sqliteExecutor{executor{tx}})
	})
}

// Read runs fn on the read pool (or the writer when there is none).
func (s sqliteDriver) Read(ctx context.Context, fn func(context.Context, driver.Executor) error) error {
	return s.readTx(ctx, func(q gen.DBTX) error { return fn(ctx, sqliteExecutor{executor{q}}) })
}

// Snapshot runs fn in one read-only transaction.
func (s sqliteDriver) Snapshot(ctx context.Context, fn func(context.Context, driver.Executor) error) error {
	return s.snapshotTx(ctx, func(q gen.DBTX) error { return fn(ctx, sqliteExecutor{executor{q}}) })
}

// sqliteExecutor is the engine's driver.Executor: sqlc's queries plus the
// engine's answer to whether a lease holder is gone.
type sqliteExecutor struct{ executor }

// HolderGone asks the operating system: a holder made by NewHolder names
// a process on this host, which is gone when no process has its pid, or
// one started at another time does.
func (sqliteExecutor) HolderGone(_ context.Context, holder string) (bool, error) {
	return holderIsDead(holder), nil
}
