package pg

// oneround.go sends a batch of plain appends in one round trip: its
// BEGIN, its guard and locks, its rows, its counters and its COMMIT.
// Two round trips had been the least (deferred.go: the BEGIN's, which
// reads the guard's catalog rows and the sessions it locked back to the
// client, then the COMMIT's, which the rows and counters ride), and at
// 16 appenders the BEGIN's round was a fifth of a batch's time.
//
// The appends' callbacks run first, one after another, on a pipeline
// with no connection (runLanes with conn nil): a plain append's
// statements all ride (MessageInsertDeferred, rideCount), and any other
// statement, one that needs an answer, is refused (errNeedsRound). A lone
// append goes this way too: with its lane in the leader's goroutine it
// ran no slower than on its own path of four round trips
// (docs/PERFORMANCE.md). When every callback ran through, one pgx.Batch
// carries everything, and what the client checked between the two rounds
// the server checks inside the transaction, each statement failing
// (dividing by zero) unless its check holds, so the COMMIT behind it
// never runs: the guard reads exactly what it read when it last found
// nothing (schemaGuard.unchanged), and every session of the batch was
// locked (lockEverySession). The statements are prepared by name first
// (prepareOneRound, tx.go). Otherwise nothing was written:
// the batch goes the way of two round trips, its callbacks run again,
// and that way tells a held session (run aside) from a missing one (its
// caller's ErrNotFound) and a new object on the tables (ErrForeignSchema)
// from an old one. A failure of the riders is theirs, as in the COMMIT's
// round (commitWithRiders).

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// oneRound runs batch in one round trip when it can (oneround.go); sent
// is false when it did not, with nothing written, and the connection
// holds no transaction. An append that looks a key up needs its answer
// before the COMMIT, so its batch takes two round trips.
func (a *appender) oneRound(ctx context.Context, c *pgx.Conn, batch []*appendRequest, first, last time.Time) (replay []*appendRequest, err error, undone, sent bool) {
	clean := a.eng.guard.clean.Load()
	if clean == nil || c.PgConn().CustomData()[oneRoundOff] != nil || slices.ContainsFunc(batch, func(r *appendRequest) bool { return len(r.looksUp) > 0 }) {
		return nil, nil, false, false
	}
	lanes, _, crowded := planLanes(batch, nil)
	runs, errs := laneRuns(ctx, lanes)
	p := runLanes(ctx, nil, runs, crowded, true)
	if p.refused || p.riderFailed || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		return nil, nil, false, false
	}
	h := p.takeRiders()
	if h == nil {
		return nil, nil, false, false
	}
	ok := slices.Concat(lanes...)
	return a.commitInOneRound(c, ok, h, clean, first, last)
}
