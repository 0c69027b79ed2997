package db

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/store/driver"
)

// watchPoll is how often a watched store asks SQLite whether another
// connection committed. PRAGMA data_version reads the WAL index's header
// (shared memory), no page of the file: an idle `sessiondb follow` spends
// 1.4% of one core on it (docs/LIVE-UPDATES.md), and 25 ms keeps a
// watcher well inside 100 ms of another process's commit.
const watchPoll = 25 * time.Millisecond

// Changes subscribes to the file's commits (see driver.Driver): this
// handle's own wake it at once (writeTx), other handles' and processes'
// at the next poll of PRAGMA data_version.
func (d sqliteDriver) Changes(context.Context) (driver.Feed, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	sub, err := d.changes.Subscribe()
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// watchSource is the engine's change source (changefeed.Source): it keeps
// one read connection while someone watches and polls PRAGMA data_version
// on it, which changes when any other connection — this process's writer
// included — committed since the connection's last look. Without a read
// pool (rollback-journal mode) it polls on the writer, whose own commits
// wake watchers through writeTx instead.
func (e *engine) watchSource(ctx context.Context, changed func()) error {
	version := func(ctx context.Context) (v int64, err error) {
		err = e.w.read(ctx, func(q gen.DBTX) error { return dataVersion(ctx, q, &v) })
		return v, err
	}
	if e.readers != nil {
		conn, err := e.readers.Conn(ctx)
		if err != nil {
			return e.watchStopped(ctx, err)
		}
		defer conn.Close()
		version = func(ctx context.Context) (v int64, err error) { return v, dataVersion(ctx, conn, &v) }
	}
	last, err := version(ctx)
	if err != nil {
		return e.watchStopped(ctx, err)
	}
	// A commit between a watcher's subscription and this first look is in
	// last already: wake once, so the watcher reads it.
	changed()
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		v, err := version(ctx)
		switch {
		case errors.Is(e.cause(err), ErrLocked):
			continue // a reader is never locked out for long (a WAL recovery); look again
		case err != nil:
			return e.watchStopped(ctx, err)
		case v != last:
			last = v
			changed()
		}
	}
}

// watchStopped is why polling stopped: nothing when ctx ended or the
// store closed under it (Close reports ErrClosed to watchers itself),
// else the mapped error.
func (e *engine) watchStopped(ctx context.Context, err error) error {
	if ctx.Err() != nil || e.closed.Load() {
		return nil
	}
	return e.cause(err)
}

// dataVersion reads PRAGMA data_version into v. Hand-written: sqlc cannot
// express a PRAGMA.
func dataVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, v *int64) error {
	return q.QueryRowContext(ctx, "PRAGMA data_version").Scan(v)
}
