package pg

// deferred.go saves a batch its lanes' round trips: a plain append's two
// statements — its rows' INSERT and its session's counter UPDATE — ride
// the round trip of the batch's COMMIT (the riders). Neither answer is
// needed before then: the new rows' ids go back to the caller after the
// COMMIT
// (driver.MessageInsertDeferrer), and the UPDATE only says whether the
// session counted (0 rows for a session compression closed, or a missing
// one, which the append then refuses). On the pipeline the INSERT is
// taken without an answer and the UPDATE answered at once, "counted";
// both wait (pipeline.riders) and are sent first in the COMMIT's round,
// the counts as SessionAddMessageCountsAll, which fails — so the COMMIT
// behind it never runs — when a session counted nothing. Any failure
// there rolls the batch back, and it runs again careful: each append in
// a savepoint, its statements sent and answered one by one, the refused
// one answered its error alone. An append that goes on after a rider
// (one that looks a key up after its first message's row) sends the
// riders first in its next round, checked there (checkRiders).
//
// Nothing a caller sees changes: the callers are answered after the
// COMMIT, and a COMMIT only follows riders that all did what their early
// answers said.

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/pg/internal/pggen"
	"github.com/sessiondb/sessiondb/store/driver"
)

var _ driver.MessageInsertDeferrer = pgExecutor{}

// MessageInsertDeferred implements driver.MessageInsertDeferrer: on a
// pipeline that defers, rows that one shared INSERT carries ride a later
// round, and their ids are handed to id when the INSERT is answered.
func (e pgExecutor) MessageInsertDeferred(_ context.Context, rows []driver.MessageInsertParams, id func(j int, id int64)) bool {
	p, ok := e.db.(*pipeline)
	if !ok || !p.deferring || len(rows) == 0 || len(rows) > insertManyRows {
		return false
	}
	size := 0
	for i := range rows {
		if !shareable(&rows[i]) {
			return false
		}
		size += textBytes(&rows[i])
	}
	if size > insertManyBytes {
		return false
	}
	objs, err := rowObjects(rows)
	if err != nil {
		return false // inserted now, where the error is answered
	}
	p.noteInserted(rows[0].SessionID, len(rows)) // one append's rows: one session's
	p.ride(&pipeStmt{rows: rows, rowsJSON: objs, rowsBytes: size, deliver: id})
	return true
}

// rideCount lets s, a lane's counter UPDATE, ride when the pipeline
// defers and the session's id JSON carries (SessionAddMessageCountsAll
// reads it from JSON).
func (p *pipeline) rideCount(s *pipeStmt) bool {
	if !p.deferring || !rules.JSONExact(s.counts.ID) {
		return false
	}
	p.ride(s)
	return true
}

func (p *pipeline) ride(s *pipeStmt) {
	s.done, s.rider = make(chan struct{}), true
	p.mu.Lock()
	p.riders = append(p.riders, s)
	p.mu.Unlock()
}

// checkRiders hands riding rows their ids once a round carried them, and
// notes a rider that failed or a count that counted nothing: its append
// went on as if it had not, so the batch must run again.
func (p *pipeline) checkRiders(round []*pipeStmt) {
	for _, s := range round {
		if !s.rider {
			continue
		}
		if s.err != nil || (s.counts != nil && s.tag.RowsAffected() != 1) {
			p.riderFailed = true
		}
		s.handIDs()
	}
}

// handIDs gives a riding INSERT's ids to its append.
func (s *pipeStmt) handIDs() {
	if s.deliver != nil && s.err == nil && len(s.ids) == len(s.rows) {
		for j, id := range s.ids {
			s.deliver(j, id)
		}
	}
}

// commitRiders are the riders the lanes left, as sent first in the
// COMMIT's round trip: their rows' INSERTs, shared as a round's are, then
// their counts as one SessionAddMessageCountsAll.
type commitRiders struct {
	stmts   []outgoing
	all     []*pipeStmt
	countsE error // SessionAddMessageCountsAll's answer
}

// takeRiders takes the riders the lanes left; nil when none are.
func (p *pipeline) takeRiders() *commitRiders {
	p.mu.Lock()
	all := p.riders
	p.riders = nil
	p.mu.Unlock()
	if len(all) == 0 {
		return nil
	}
	h := &commitRiders{all: all}
	var inserts, counts []*pipeStmt
	for _, s := range all {
		if s.rows != nil {
			inserts = append(inserts, s)
		} else {
			counts = append(counts, s)
		}
	}
	if len(inserts) > 0 {
		h.stmts = sharedInserts(p, inserts)
	}
	if len(counts) > 0 {
		doc, _ := json.Marshal(countRows(p, counts)) // strings JSON carries, and integers: cannot fail
		sql, args := recorded(func(db pggen.DBTX) error {
			return queries.SessionAddMessageCountsAll(p.ctx, db, string(doc))
		})
		h.stmts = append(h.stmts, outgoing{sql: sql, args: args, read: func(res pgx.BatchResults) {
			_, h.countsE = res.Exec()
		}})
	}
	return h
}

// firstErr is the first of the riders' failures, in the order they were
// sent; a failure skips every statement after it.
func (h *commitRiders) firstErr() error {
	for _, s := range h.all {
		if s.rows != nil && s.err != nil {
			return s.err
		}
	}
	return h.countsE
}
