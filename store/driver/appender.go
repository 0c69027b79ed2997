package driver

import (
	"context"
	"time"
)

// Appender is an engine that runs plain appends apart from its other
// writes. The store calls WriteAppend, when the engine has it, for an
// append to one session that holds no lease (AppendMessage,
// AppendMessages); every other write goes through Write.
//
// fn reads and writes only sessionID's rows: it looks its messages up by
// idempotency key or platform message id, inserts messages into it and
// adds to its counters, refusing a session compression closed. That lets
// an engine run it at a weaker isolation than Write's (PostgreSQL: READ
// COMMITTED with the session's row locked first) and in one transaction
// with other callers' appends (group commit). Everything else Write
// promises holds: fn may run more than once, only after its changes were
// rolled back, and must have no effect outside tx; an unknown COMMIT is
// ErrCommitUnknown, never rerun; patience bounds every wait.
//
// blind says fn looks nothing up (no message of the append has an
// idempotency key or a platform message id): it only inserts and counts,
// so its statements commute with every other append's to the session,
// and an engine may run it beside them rather than after them (the
// PostgreSQL engine's pipeline, pg/pipeshare.go).
type Appender interface {
	WriteAppend(ctx context.Context, patience time.Duration, sessionID string, blind bool, fn func(ctx context.Context, tx Executor) error) error
}
