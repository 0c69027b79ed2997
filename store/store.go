package store

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/sessiondb/sessiondb/store/driver"
)

// Store is an agent's conversation state, safe for use by many goroutines
// and shared with other processes (and, on a server engine, machines).
// Get one from an engine: db.Open for a SQLite file, pg.Open for
// PostgreSQL.
type Store struct {
	drv    driver.Driver
	opts   Options
	closed atomic.Bool
	// appended counts messages acknowledged by appends (MessagesAppended).
	appended atomic.Uint64
}

// New returns a Store over an engine's driver. Engines call it; users
// call the engine's Open.
func New(drv driver.Driver, opts Options) (*Store, error) {
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, opErr("open", "", err)
	}
	return &Store{drv: drv, opts: opts}, nil
}

// MaxMessageBytes is the largest message this store's engine keeps: the
// bytes of its content, tool calls, reasoning, parts and metadata
// together. An append or import of a larger one is refused with
// ErrTooLarge before anything is written. The SQLite engine keeps 64 MiB,
// PostgreSQL 256 MiB (docs/RELIABILITY.md says what each was measured to
// handle).
func (s *Store) MaxMessageBytes() int64 { return s.drv.MaxMessageBytes() }

// Close closes the engine. Calls after Close return ErrClosed; a second
// Close returns nil.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	return opErr("close", "", s.drv.Close())
}

// MessagesAppended counts the messages this Store's append calls have
// acknowledged since Open, a retried message whose idempotency key was
// used included: the engines' Metrics report it.
func (s *Store) MessagesAppended() uint64 { return s.appended.Load() }

// write runs fn as one write transaction with the given patience.
func (s *Store) write(ctx context.Context, op, sessionID string, patience time.Duration, fn func(ctx context.Context, tx driver.Executor) error) error {
	if s.closed.Load() {
		return opErr(op, sessionID, ErrClosed)
	}
	return opErr(op, sessionID, s.drv.Write(ctx, patience, fn))
}

// writeAppend runs an append's fn: through the engine's own append path
// when it has one (driver.Appender: fn touches only sessionID's rows, and
// looks up only the messages looksUp names), else as any write.
func (s *Store) writeAppend(ctx context.Context, op, sessionID string, patience time.Duration, looksUp []string, fn func(ctx context.Context, tx driver.Executor) error) error {
	a, ok := s.drv.(driver.Appender)
	if !ok {
		return s.write(ctx, op, sessionID, patience, fn)
	}
	if s.closed.Load() {
		return opErr(op, sessionID, ErrClosed)
	}
	return opErr(op, sessionID, a.WriteAppend(ctx, patience, sessionID, looksUp, fn))
}

// read runs fn on a read connection.
func (s *Store) read(ctx context.Context, op, sessionID string, fn func(driver.Executor) error) error {
	if s.closed.Load() {
		return opErr(op, sessionID, ErrClosed)
	}
	return s.opErr(op, sessionID, s.drv.Read(ctx, func(_ context.Context, q driver.Executor) error { return fn(q) }))
}

// snapshot runs fn inside one read-only transaction, so every statement
// of a multi-statement read (a lineage walk, conversation pages, an
// export) sees the same committed state.
func (s *Store) snapshot(ctx context.Context, op, sessionID string, fn func(driver.Executor) error) error {
	if s.closed.Load() {
		return opErr(op, sessionID, ErrClosed)
	}
	return s.opErr(op, sessionID, s.drv.Snapshot(ctx, func(_ context.Context, q driver.Executor) error { return fn(q) }))
}

// opErr is opErr, reporting ErrClosed for a read that Close cut short.
func (s *Store) opErr(op, sessionID string, err error) error {
	if err != nil && s.closed.Load() && !errors.Is(err, ErrClosed) {
		err = ErrClosed
	}
	return opErr(op, sessionID, err)
}

// now is the store's clock: Unix milliseconds, the one time representation
// in every engine's schema.
func now() int64 { return time.Now().UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
