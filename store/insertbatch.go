package store

import (
	"context"
	"errors"
	"slices"

	"github.com/sessiondb/sessiondb/store/driver"
)

// newRows holds an append's new rows until something must read them or
// the append ends, then inserts them in one statement where the engine can
// (driver.MessageInsertBatcher: PostgreSQL's multi-row INSERT, half the
// server's work a row of one INSERT each, docs/PERFORMANCE.md), else one
// MessageInsert each, at once. What insertMessages reads between rows is
// whether a later message repeats an earlier one (its idempotency key or
// platform id): such a message makes the held rows go in first, so the
// lookup finds them, as it would had each row been inserted at once.
type newRows struct {
	tx      driver.Executor
	batcher driver.MessageInsertBatcher // nil: insert at once
	ids     []int64                     // the append's, by message: where flush writes
	at      []int                       // each held row's message
	rows    []driver.MessageInsertParams
	keys    map[string]bool // the held rows' idempotency keys
	pids    map[string]bool // and platform message ids
}

func newRowsFor(tx driver.Executor, ids []int64) *newRows {
	b, _ := tx.(driver.MessageInsertBatcher)
	return &newRows{tx: tx, batcher: b, ids: ids}
}

// repeats reports whether p's idempotency key or platform message id is
// a held row's.
func (r *newRows) repeats(p *driver.MessageInsertParams) bool {
	return (p.IdempotencyKey != nil && r.keys[*p.IdempotencyKey]) ||
		(p.PlatformMessageID != nil && r.pids[*p.PlatformMessageID])
}

// add inserts p as message i's row, or holds it for flush.
func (r *newRows) add(ctx context.Context, i int, p driver.MessageInsertParams) error {
	if r.batcher == nil {
		id, err := r.tx.MessageInsert(ctx, p)
		r.ids[i] = id
		return insertErr(err)
	}
	r.at = append(r.at, i)
	r.rows = append(r.rows, p)
	if p.IdempotencyKey != nil {
		if r.keys == nil {
			r.keys = map[string]bool{}
		}
		r.keys[*p.IdempotencyKey] = true
	}
	if p.PlatformMessageID != nil {
		if r.pids == nil {
			r.pids = map[string]bool{}
		}
		r.pids[*p.PlatformMessageID] = true
	}
	return nil
}

// flush inserts the held rows and writes their ids: now, or, where the
// engine defers them (driver.MessageInsertDeferrer), before the append's
// write returns (insertMessages reads no id before that).
func (r *newRows) flush(ctx context.Context) error {
	rows, at := r.rows, r.at
	r.rows, r.at = r.rows[:0], r.at[:0]
	clear(r.keys)
	clear(r.pids)
	if len(rows) == 0 {
		return nil
	}
	if d, ok := r.tx.(driver.MessageInsertDeferrer); ok {
		// Copies: the next rows reuse rows' and at's arrays.
		ids, at := r.ids, slices.Clone(at)
		if d.MessageInsertDeferred(ctx, slices.Clone(rows), func(j int, id int64) { ids[at[j]] = id }) {
			return nil
		}
	}
	switch len(rows) {
	case 1: // the plain statement, prepared once a connection
		id, err := r.tx.MessageInsert(ctx, rows[0])
		r.ids[at[0]] = id
		return insertErr(err)
	}
	ids, err := r.batcher.MessageInsertBatch(ctx, rows)
	if err != nil {
		return insertErr(err)
	}
	for j, i := range at {
		r.ids[i] = ids[j]
	}
	return nil
}

// insertErr is an insert's error as the append reports it: the foreign key
// refusing a row means the session does not exist.
func insertErr(err error) error {
	if errors.Is(err, ErrNotFound) {
		return ErrNotFound
	}
	return err
}
