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
// looksUp names what fn looks up before it inserts: each message's
// idempotency key ("k" + key) and platform message id ("p" + id); none
// when it looks nothing up. Appends of one session whose names differ
// commute — none can find what another inserts, and each only inserts
// and counts besides — so an engine may run them beside each other
// rather than one after another (the PostgreSQL engine's pipeline,
// pg/pipeshare.go); appends sharing a name must run in order.
type Appender interface {
	WriteAppend(ctx context.Context, patience time.Duration, sessionID string, looksUp []string, fn func(ctx context.Context, tx Executor) error) error
}
