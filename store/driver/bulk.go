package driver

import "context"

// BulkLoader is an engine that writes a bulk load (many messages in a
// row: an import, a copy, history brought over) more cheaply when told
// one is under way. The store calls BeginBulk before the load's writes
// and the returned end after them (once, whatever happened); loads may
// overlap. Nothing of a write's contract changes: every write still
// commits durably, alone or in a group, through the engine's one write
// path; only derived work (SQLite: full-text indexing) is batched
// differently, and end brings it up to date before it returns, unless
// ctx ends or another process holds the write lock first (the engine's
// own background work then finishes it).
type BulkLoader interface {
	BeginBulk() (end func(ctx context.Context))
}

// MessageImportBatcher is an executor that writes several imported
// messages in one exchange with its database (PostgreSQL: the COPY
// protocol), in order, inside the caller's transaction: what
// MessageImport would write, row for row, without a round trip and a
// statement each. It returns nothing: a bulk import reads back no id (an
// origin that needs one is written by MessageImport). An executor without
// it is given the rows one MessageImport at a time.
type MessageImportBatcher interface {
	MessageImportBatch(ctx context.Context, rows []MessageImportParams) error
}

// MessageInsertBatcher is an executor that inserts several messages of
// one append in one statement (PostgreSQL: a multi-row INSERT), inside
// the caller's transaction: what MessageInsert would write, row for row
// and in order, with the statement's fixed costs (a round trip, planning,
// constraint setup) paid once. It returns the new ids in the order of
// rows. The rows are new: the store has already looked up their
// idempotency keys and platform ids, and no two of them repeat each
// other's. Its errors are MessageInsert's. An executor without it is given
// the rows one MessageInsert at a time.
type MessageInsertBatcher interface {
	MessageInsertBatch(ctx context.Context, rows []MessageInsertParams) ([]int64, error)
}

// MessageInsertDeferrer is an executor that may send an append's new rows
// later in its transaction, with a statement it sends anyway (PostgreSQL's
// append pipeline sends them with the batch's COMMIT: one round trip less,
// docs/ARCHITECTURE.md). When it takes the rows (deferred true) it calls
// id(j, id) with the id of rows[j] once they are inserted, before the
// write's transaction commits and so before the write returns; an error
// inserting them fails a later statement or the commit, and the write
// then runs again or fails as after any failed statement. The rows are
// MessageInsertBatcher's (new, none repeating another); the caller reads
// no id before the write returns. deferred false: insert them now.
type MessageInsertDeferrer interface {
	MessageInsertDeferred(ctx context.Context, rows []MessageInsertParams, id func(j int, id int64)) (deferred bool)
}
