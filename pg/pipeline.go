package pg

// pipeline.go sends the statements of a batch's appends to the server
// together: one round trip carries the next statement of every append in
// the batch (pgx.Batch), instead of one round trip each. On a loaded
// machine a round trip over the Unix socket costs a context switch to the
// server and back, which bounded a batch of 16 appends (34 round trips)
// more than its WAL flush did.

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiondb/sessiondb/store/driver"
)

// errNotPipelined stops an append that asked the pipeline for a
// statement returning many rows, which it does not carry (no plain
// append needs one: only the refusal of a closed session reads its
// lineage). The batch then runs again without the pipeline.
var errNotPipelined = errors.New("pg: a multi-row query inside a pipelined append")

// pipeline runs the callbacks of several lanes concurrently on one
// connection. A lane's statement waits until every lane is waiting for a
// statement or done; then all waiting statements go to the server in one
// pgx.Batch, in the order they were asked for, and each lane gets its answer.
//
// Statements of different lanes interleave, so lanes must commute for
// the outcome to be one that running them one after another would give:
// an append has a lane of its own unless another of its session looks up
// the same key (then those that look up share one lane, in order), and
// the counts of one session's lanes are added together (pipeshare.go). After any error the
// transaction is aborted (the server fails every statement after it):
// the batch must be rolled back and run again another way.
type pipeline struct {
	conn *pgx.Conn
	ctx  context.Context // the batch's: bounds each round trip
	mu   sync.Mutex
	wake sync.Cond // signalled when a lane waits or ends
	// +checklocks:mu
	running int // lanes running Go code: neither waiting nor done
	// +checklocks:mu
	pending []*pipeStmt
	rounds  int // round trips sent
	// crowded are the sessions with several lanes: their counters are
	// read from every row the pipeline inserted into them (pipeshare.go),
	// counted in inserted.
	crowded map[string]bool
	// +checklocks:mu
	inserted map[string]int64
	// deferring lets a lane's rows' INSERT and counter UPDATE ride a
	// later round, or the COMMIT's (deferred.go): the riders.
	deferring bool
	// +checklocks:mu
	riders []*pipeStmt
	// riderFailed: a rider, sent in a round, failed or counted nothing.
	riderFailed bool
	// refused: the pipeline has no connection (it runs a batch's lanes
	// before the batch's transaction, oneround.go) and a lane asked for a
	// statement that needs an answer; it was answered errNeedsRound.
	refused bool
}

// errNeedsRound answers a statement asked of a pipeline without a
// connection: the batch cannot be sent in one round trip (oneround.go).
var errNeedsRound = errors.New("pg: an append's statement needs an answer before its transaction's COMMIT")

// pipeStmt is one lane's statement and, once answered, its outcome.
type pipeStmt struct {
	sql  string
	args []any
	dest []any // a row's scan targets; nil for an Exec
	row  bool
	// A statement the round may share with other lanes' (pipeshare.go):
	// new rows (their JSON objects, the size of their text; ids answers),
	// or a session's counters (tag answers). sql is then empty.
	rows      []driver.MessageInsertParams
	rowsJSON  string
	rowsBytes int
	ids       []int64
	counts    *driver.SessionAddMessageCountsParams
	tag       pgconn.CommandTag
	err       error
	done      chan struct{}
	rider     bool                  // answered before it was sent (deferred.go)
	deliver   func(j int, id int64) // a riding INSERT's: where its ids go
}

// runLanes runs every lane in a goroutine of its own and the round trips
// in the caller's, until all lanes return, and returns the pipeline: the
// riders no round carried are left in it, for the COMMIT's round. A lane
// gets the pipeline as its connection (pggen.DBTX). crowded names the
// sessions that have several lanes. With conn nil nothing is sent: the
// lanes run one after another in the caller's goroutine, and a statement
// that needs an answer is refused (submit).
func runLanes(ctx context.Context, conn *pgx.Conn, lanes []func(db *pipeline), crowded map[string]bool, deferring bool) *pipeline {
	p := &pipeline{conn: conn, ctx: ctx, running: len(lanes), crowded: crowded, inserted: map[string]int64{}, deferring: deferring}
	p.wake.L = &p.mu
	if conn == nil { // nothing to send: the lanes run one after another, here
		for _, lane := range lanes {
			lane(p)
		}
		return p
	}
	for _, lane := range lanes {
		go func() {
			defer p.laneDone()
			lane(p)
		}()
	}
	for {
		p.mu.Lock()
		for p.running > 0 {
			p.wake.Wait()
		}
		round := p.pending
		p.pending = nil
		p.running += len(round)
		if len(round) > 0 { // the riders go first, in the order asked
			round = append(p.riders, round...)
			p.riders = nil
		}
		p.mu.Unlock()
		if len(round) == 0 {
			return p // every lane is done
		}
		p.send(round)
		p.checkRiders(round)
	}
}

func (p *pipeline) laneDone() {
	p.mu.Lock()
	p.running--
	p.wake.Signal()
	p.mu.Unlock()
}

// send sends a round's statements as one batch and answers each.
func (p *pipeline) send(round []*pipeStmt) {
	p.rounds++
	out := shareRound(p, round)
	var b pgx.Batch
	for _, o := range out {
		b.Queue(o.sql, o.args...)
	}
	res := p.conn.SendBatch(p.ctx, &b)
	for _, o := range out {
		o.read(res)
	}
	if err := res.Close(); err != nil {
		for _, s := range round {
			if s.err == nil {
				s.err = err
			}
		}
	}
	for _, s := range round {
		close(s.done)
	}
}

// submit queues s for the next round and waits for its answer; on a
// pipeline without a connection it is refused at once (errNeedsRound).
func (p *pipeline) submit(s *pipeStmt) {
	s.done = make(chan struct{})
	if p.conn == nil {
		p.refused = true
		s.err = errNeedsRound
		close(s.done)
		return
	}
	p.mu.Lock()
	p.pending = append(p.pending, s)
	p.running--
	p.wake.Signal()
	p.mu.Unlock()
	<-s.done
}

// Exec implements pggen.DBTX.
func (p *pipeline) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	s := &pipeStmt{sql: sql, args: args}
	p.submit(s)
	return s.tag, s.err
}

// QueryRow implements pggen.DBTX: the statement is sent when the row is
// scanned, with its targets.
func (p *pipeline) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	return pipeRow{p: p, sql: sql, args: args}
}

// Query implements pggen.DBTX by refusing (errNotPipelined).
func (p *pipeline) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errNotPipelined
}

type pipeRow struct {
	p    *pipeline
	sql  string
	args []any
}

func (r pipeRow) Scan(dest ...any) error {
	s := &pipeStmt{sql: r.sql, args: r.args, dest: dest, row: true}
	r.p.submit(s)
	return s.err
}
