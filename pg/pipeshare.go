package pg

// pipeshare.go lets the appends of one pipeline round share statements:
// the new rows of every lane waiting to insert go in one
// MessageInsertMany, and the counters of every lane waiting to count in
// one SessionAddMessageCountsMany, instead of a statement each. A round
// of 16 single-message appends is then two statements, not 32: each
// statement the server runs parses, plans, prepares the table's CHECK
// expressions and opens its indexes again, and a multi-row statement
// pays that once (docs/PERFORMANCE.md, issue 33's "Today").
//
// Sharing changes no outcome: lanes commute (pipeline.go), the shared
// INSERT takes the rows in the order the lanes asked, as the round's
// statements went before, so each append's ids ascend in its order; a
// failure fails every lane of the shared statement, and any failure on
// the pipeline already sends the whole batch to run again careful, one
// caller at a time in savepoints, where nothing is shared
// (appendbatch.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/pg/internal/pggen"
	"github.com/sessiondb/sessiondb/store/driver"
)

// MessageInsert implements driver.Queries. On a pipeline a row that JSON
// carries (jsonCarries) waits for the round and may share its INSERT.
func (e pgExecutor) MessageInsert(ctx context.Context, arg driver.MessageInsertParams) (int64, error) {
	p, ok := e.db.(*pipeline)
	if !ok {
		return e.executor.MessageInsert(ctx, arg)
	}
	if !shareable(&arg) {
		p.noteInserted(arg.SessionID, 1)
		return e.executor.MessageInsert(ctx, arg)
	}
	ids, err := p.insertRows([]driver.MessageInsertParams{arg})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// SessionAddMessageCounts implements driver.Queries. On a pipeline it
// waits for the round and may share its UPDATE.
func (e pgExecutor) SessionAddMessageCounts(ctx context.Context, arg driver.SessionAddMessageCountsParams) (int64, error) {
	p, ok := e.db.(*pipeline)
	if !ok {
		return e.executor.SessionAddMessageCounts(ctx, arg)
	}
	s := &pipeStmt{counts: &arg}
	if p.rideCount(s) {
		return 1, nil // checked where it is sent (deferred.go)
	}
	p.submit(s)
	if s.err != nil {
		return 0, mapError(s.err)
	}
	return s.tag.RowsAffected(), nil
}

// shareable reports whether a row may go in a shared INSERT: what
// MessageInsertBatch would put in a MessageInsertMany.
func shareable(p *driver.MessageInsertParams) bool {
	return jsonCarries(p) && textBytes(p) <= insertManyBytes
}

// insertRows inserts rows (each shareable, at most insertManyRows of
// them) in this round's shared INSERT and returns their ids, in order.
// The lane encodes its rows' JSON itself, beside the other lanes.
func (p *pipeline) insertRows(rows []driver.MessageInsertParams) ([]int64, error) {
	objs, err := rowObjects(rows)
	if err != nil {
		return nil, err
	}
	p.noteInserted(rows[0].SessionID, len(rows)) // one append's rows: one session's
	s := &pipeStmt{rows: rows, rowsJSON: objs}
	for i := range rows {
		s.rowsBytes += textBytes(&rows[i])
	}
	p.submit(s)
	if s.err != nil {
		return nil, mapError(s.err)
	}
	if len(s.ids) != len(rows) {
		return nil, fmt.Errorf("pg: %d rows inserted, %d ids returned", len(rows), len(s.ids))
	}
	return s.ids, nil
}

// outgoing is one statement of a round as sent, and how its answer
// reaches the lanes' statements it carries.
type outgoing struct {
	sql  string
	args []any
	read func(pgx.BatchResults)
}

// shareRound turns a round's statements into the statements sent: each
// plain statement as it is, where the first of the round's inserts stood
// the inserts packed into as few MessageInsertMany as their bounds allow,
// and where the first counter update stood (or after the inserts, if it
// stood before them) the updates in one. A shared statement that would
// carry one lane's statement alone is that statement, as the lane would
// have sent it.
func shareRound(p *pipeline, round []*pipeStmt) []outgoing {
	var inserts, counts []*pipeStmt
	for _, s := range round {
		switch {
		case s.rows != nil:
			inserts = append(inserts, s)
		case s.counts != nil:
			counts = append(counts, s)
		}
	}
	out := make([]outgoing, 0, len(round))
	countsDue := false // the counts wait for the inserts: a riding count may come first (deferred.go)
	for _, s := range round {
		switch {
		case s.rows != nil:
			if s == inserts[0] {
				out = append(out, sharedInserts(p, inserts)...)
				if countsDue {
					out = append(out, sharedCounts(p, counts)...)
				}
			}
		case s.counts != nil:
			if s == counts[0] {
				if len(inserts) > 0 && slices.Index(round, inserts[0]) > slices.Index(round, s) {
					countsDue = true
					continue
				}
				out = append(out, sharedCounts(p, counts)...)
			}
		default:
			out = append(out, plain(s))
		}
	}
	return out
}

// noteInserted counts n rows a lane asks the pipeline to insert into
// session sid (counted when asked: sharedCounts reads them all).
func (p *pipeline) noteInserted(sid string, n int) {
	p.mu.Lock()
	p.inserted[sid] += int64(n)
	p.mu.Unlock()
}

// insertedInto is how many rows lanes have asked to insert into sid.
func (p *pipeline) insertedInto(sid string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inserted[sid]
}

// plain is a statement sent as its lane wrote it.
func plain(s *pipeStmt) outgoing {
	return outgoing{sql: s.sql, args: s.args, read: func(res pgx.BatchResults) {
		if s.row {
			s.err = res.QueryRow().Scan(s.dest...)
		} else {
			s.tag, s.err = res.Exec()
		}
	}}
}

// sharedInserts packs the inserts' rows, in order, into statements of at
// most insertManyRows rows and insertManyBytes of text (a lane's rows
// stay in one statement).
func sharedInserts(p *pipeline, inserts []*pipeStmt) []outgoing {
	var out []outgoing
	for len(inserts) > 0 {
		n, rows, size := 0, 0, 0
		for n < len(inserts) {
			r, b := len(inserts[n].rows), inserts[n].rowsBytes
			if n > 0 && (rows+r > insertManyRows || size+b > insertManyBytes) {
				break
			}
			n, rows, size = n+1, rows+r, size+b
		}
		out = append(out, insertStatement(p, inserts[:n]))
		inserts = inserts[n:]
	}
	return out
}

// insertStatement is one INSERT for the rows of group's statements: the
// plain MessageInsert for a single row, else a MessageInsertMany whose
// ids are handed back in order, each statement its own.
func insertStatement(p *pipeline, group []*pipeStmt) outgoing {
	ctx := p.ctx
	if len(group) == 1 && len(group[0].rows) == 1 {
		s := group[0]
		sql, args := recorded(func(db pggen.DBTX) error {
			_, err := queries.MessageInsert(ctx, db, pggen.MessageInsertParams(s.rows[0]))
			return err
		})
		return outgoing{sql: sql, args: args, read: func(res pgx.BatchResults) {
			var id int64
			if s.err = res.QueryRow().Scan(&id); s.err == nil {
				s.ids = []int64{id}
			}
		}}
	}
	var doc strings.Builder
	rows := 0
	doc.WriteByte('[')
	for i, s := range group {
		if i > 0 {
			doc.WriteByte(',')
		}
		doc.WriteString(s.rowsJSON)
		rows += len(s.rows)
	}
	doc.WriteByte(']')
	sql, args := recorded(func(db pggen.DBTX) error {
		_, err := queries.MessageInsertMany(ctx, db, doc.String())
		return err
	})
	return outgoing{sql: sql, args: args, read: func(res pgx.BatchResults) {
		var ids []int64
		err := res.QueryRow().Scan(&ids)
		if err == nil && len(ids) != rows {
			err = fmt.Errorf("pg: %d rows inserted, %d ids returned", rows, len(ids))
		}
		for _, s := range group {
			if err != nil {
				s.err = err
				continue
			}
			s.ids, ids = ids[:len(s.rows)], ids[len(s.rows):]
		}
	}}
}

// countRow is SessionAddMessageCountsMany's JSON object for one
// session: the counts of its appends in the round.
type countRow struct {
	ID        string `json:"id"`
	Messages  int64  `json:"messages"`
	ToolCalls int64  `json:"tool_calls"`
	Appends   int64  `json:"appends"`
	Newest    int64  `json:"newest"`
	stmts     []*pipeStmt
}

// sharedCounts is one UPDATE for the counters of every statement in
// counts. The statements of one session (a crowded session's lanes) are added together, and read
// last_message_at from every row the pipeline inserted into it: counted
// one by one, each would read only its own count of the newest rows,
// which another lane's insert may have put after them. Every row asked
// for counts, this round's too, whichever statement the round sends
// first: a row read too many is one last_message_at already covers. Each statement is
// answered as SessionAddMessageCounts would: 1 row if its session
// counted, else 0. A lone statement of a session alone in the round, or
// an id JSON would not carry, is sent as it is.
func sharedCounts(p *pipeline, counts []*pipeStmt) []outgoing {
	var out []outgoing
	var exact []*pipeStmt
	for _, s := range counts {
		if !rules.JSONExact(s.counts.ID) {
			out = append(out, countStatement(p, s))
			continue
		}
		exact = append(exact, s)
	}
	rows := countRows(p, exact)
	if len(rows) == 1 && len(rows[0].stmts) == 1 && !p.crowded[rows[0].ID] {
		return append(out, countStatement(p, rows[0].stmts[0]))
	}
	if len(rows) == 0 {
		return out
	}
	doc, _ := json.Marshal(rows) // strings JSON carries, and integers: cannot fail
	sql, args := recorded(func(db pggen.DBTX) error {
		_, err := queries.SessionAddMessageCountsMany(p.ctx, db, string(doc))
		return err
	})
	return append(out, outgoing{sql: sql, args: args, read: func(res pgx.BatchResults) {
		var ids []string
		err := res.QueryRow().Scan(&ids)
		for _, r := range rows {
			tag := pgconn.NewCommandTag("UPDATE 0")
			if slices.Contains(ids, r.ID) {
				tag = pgconn.NewCommandTag("UPDATE 1")
			}
			for _, s := range r.stmts {
				s.tag, s.err = tag, err
			}
		}
	}})
}

// countRows adds counts (each session's id one JSON carries) up by
// session, in the order the sessions first appear, with the newest rows
// each reads last_message_at from (sharedCounts says which).
func countRows(p *pipeline, counts []*pipeStmt) []*countRow {
	var rows []*countRow
	bySession := map[string]*countRow{}
	for _, s := range counts {
		c := s.counts
		r := bySession[c.ID]
		if r == nil {
			r = &countRow{ID: c.ID}
			bySession[c.ID] = r
			rows = append(rows, r)
		}
		r.Messages += c.Messages
		r.ToolCalls += c.ToolCalls
		r.Appends++
		r.stmts = append(r.stmts, s)
	}
	for _, r := range rows {
		r.Newest = r.Messages
		if p.crowded[r.ID] {
			r.Newest = max(r.Messages, p.insertedInto(r.ID))
		}
	}
	return rows
}

// countStatement is s's SessionAddMessageCounts, sent as it is.
func countStatement(p *pipeline, s *pipeStmt) outgoing {
	sql, args := recorded(func(db pggen.DBTX) error {
		_, err := queries.SessionAddMessageCounts(p.ctx, db, pggen.SessionAddMessageCountsParams(*s.counts))
		return err
	})
	return outgoing{sql: sql, args: args, read: func(res pgx.BatchResults) {
		s.tag, s.err = res.Exec()
	}}
}
