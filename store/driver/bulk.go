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
