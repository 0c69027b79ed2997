package pg

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/internal/changefeed"
	"github.com/sessiondb/sessiondb/store/driver"
)

// Live updates on PostgreSQL: every write sends NOTIFY on the store's
// channel, and a watched store LISTENs on one connection of its own and
// wakes its watchers at each. A batch of appends sends it after its
// COMMIT, in the same round trip, in a transaction of its own that does
// not wait for its flush (appender.commitAndNotify): a NOTIFY inside the
// transaction would hold the server's one notification lock through the
// COMMIT's WAL flush, so every process's commits would flush in turn.
// Other writes, rarer, send it with their BEGIN (notifyStatement; the
// server delivers it at COMMIT and drops it on ROLLBACK). Where LISTEN is
// unavailable — a hot standby refuses it; PgBouncer in transaction mode
// cannot keep it (set Options.WatchByPolling) — watchers are woken every
// watchPoll instead, and each reads the messages after the last it saw.

const (
	// watchPoll is how often watchers are woken without LISTEN.
	watchPoll = 50 * time.Millisecond
	// listenRetry is how long a store that lost LISTEN (the server
	// restarted, a standby) polls before it tries LISTEN again.
	listenRetry = 10 * time.Second
	// listenSafetyWake wakes watchers even without a notification, and
	// checks the LISTEN connection is alive: a connection a network cut
	// silently still waits, and a notification cannot be lost for longer.
	listenSafetyWake = 5 * time.Second
)

// changeChannel is the NOTIFY channel of the store in schema: one per
// schema, so tenants do not wake each other's watchers. A channel is an
// identifier (at most 63 bytes); a schema name too long for the prefix
// is hashed.
func changeChannel(schema string) string {
	const prefix = "sessiondb_"
	if len(prefix)+len(schema) <= 63 {
		return prefix + schema
	}
	sum := sha256.Sum256([]byte(schema))
	return prefix + hex.EncodeToString(sum[:16])
}

// notifyStatement is the NOTIFY of the store's channel: sent with the
// BEGIN of tx.go's writeOnce (Write), after the COMMIT of an append batch.
func notifyStatement(schema string) string {
	return "NOTIFY " + pgx.Identifier{changeChannel(schema)}.Sanitize()
}

// Changes subscribes to the schema's commits (see driver.Driver).
func (d pgDriver) Changes(context.Context) (driver.Feed, error) {
	if d.closed.Load() {
		return nil, driver.ErrClosed
	}
	sub, err := d.changes.Subscribe()
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// watchSource is the engine's change source (changefeed.Source): LISTEN
// while the server allows it, polling while it does not.
func (e *engine) watchSource(ctx context.Context, wake func()) error {
	changed := func() {
		e.route.wrote.Add(1) // the watchers' reads must see the change: readroute.go
		wake()
	}
	level := slog.LevelWarn // the first failure; a standby's every retry fails alike
	for {
		if !e.watchByPolling {
			err := e.listen(ctx, changed)
			if ctx.Err() != nil {
				return nil
			}
			e.logger.Log(ctx, level, "sessiondb: cannot LISTEN for live updates; watchers poll", "schema", e.schema,
				"every", watchPoll, "retry_in", listenRetry, "err", err)
			level = slog.LevelDebug
		}
		if !e.poll(ctx, changed) {
			return nil
		}
	}
}

// poll wakes the watchers every watchPoll, for listenRetry (for good with
// Options.WatchByPolling); false when ctx ended.
func (e *engine) poll(ctx context.Context, changed func()) bool {
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	until := time.Now().Add(listenRetry)
	for e.watchByPolling || time.Now().Before(until) {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
			changed()
		}
	}
	return true
}

// listen holds a connection of its own (not the pool's: it would keep one
// of the writers' few connections for as long as anyone watches), LISTENs
// on the store's channel and wakes the watchers at each notification,
// until ctx ends or the connection fails.
func (e *engine) listen(ctx context.Context, changed func()) error {
	conn, err := connectAside(ctx, e.pool)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackBound)
		defer cancel()
		conn.Close(cctx)
	}()
	// Hand-written: LISTEN takes an identifier, which no parameter can be.
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{changeChannel(e.schema)}.Sanitize()); err != nil {
		return err
	}
	// A commit between a watcher's subscription and the LISTEN sent no
	// notification here: wake once, so the watcher reads it.
	changed()
	for {
		wctx, cancel := context.WithTimeout(ctx, listenSafetyWake)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			changed()
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			changed()
			if err := conn.Ping(ctx); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// newChanges makes the engine's change hub.
func (e *engine) newChanges(logger *slog.Logger, byPolling bool) {
	if logger == nil {
		logger = slog.Default()
	}
	e.logger, e.watchByPolling = logger, byPolling
	e.changes = changefeed.New(e.watchSource)
}
