package db

// ftsqueue.go indexes new messages once per transaction (migration 4).
//
// The insert trigger only queues a new row's id in fts_pending; the writer
// drains the queue into both full-text indexes just before each COMMIT, in
// the same transaction. FTS5 flushes its in-memory index whenever a
// savepoint opens, and SQLite opens one for every trigger-firing statement
// inside a transaction — so indexing from the trigger wrote one segment per
// message however many messages a transaction held. Indexing once per
// transaction lets group commit and AppendMessages batches share the
// index work as they share the fsync.

import (
	"context"
	"fmt"

	"github.com/sessiondb/sessiondb/db/gen"
)

// indexQueued indexes every message queued in the open transaction and
// empties the queue. With the index marked stale it only empties it: the
// rebuild that clears the mark indexes everything.
func indexQueued(ctx context.Context, tx gen.DBTX) error {
	queued, err := queries.FTSPendingAny(ctx, tx)
	if err != nil || !queued {
		return err
	}
	// One error text for both statements: the trigram statement's
	// savepoint is where the word index's pending data reaches disk, so a
	// failure there may be either index's.
	for _, stmt := range indexQueuedSQL {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("index new messages: %w", err)
		}
	}
	return queries.FTSPendingClear(ctx, tx)
}

// indexQueuedSQL indexes the queued rows into each index, skipping a row
// the index already holds (a rebuild run by hand that left the queue
// alone) and doing nothing while the index is marked stale. Hand-written:
// sqlc cannot see FTS5's shadow tables (*_docsize, one row per indexed
// message).
var indexQueuedSQL = []string{
	`INSERT INTO messages_fts (rowid, content, tool_name)
	 SELECT m.id, m.content, m.tool_name FROM fts_pending p JOIN messages m ON m.id = p.id
	 WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
	   AND NOT EXISTS (SELECT 1 FROM messages_fts_docsize d WHERE d.id = p.id)`,
	`INSERT INTO messages_fts_trigram (rowid, content)
	 SELECT m.id, m.content FROM fts_pending p JOIN messages m ON m.id = p.id
	 WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
	   AND NOT EXISTS (SELECT 1 FROM messages_fts_trigram_docsize d WHERE d.id = p.id)`,
}

// hasTable reports whether the file has a table or virtual table of that
// name — fts_pending (migration 4: repair and Verify see older files,
// which index from their triggers) or the indexes themselves.
// Hand-written: sqlc cannot see sqlite_schema.
func hasTable(ctx context.Context, q gen.DBTX, name string) (bool, error) {
	var n int64
	err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", name).Scan(&n)
	return n != 0, err
}
