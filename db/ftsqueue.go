package db

// ftsqueue.go indexes queued messages, a slice at a time (migrations 4
// and 5).
//
// The insert trigger only queues a new row's id in fts_pending; appends
// commit the row and its queue entry and nothing else. The background
// indexer (ftsindexer.go) indexes the queue, oldest first, in write
// transactions of its own through the one writer (tx.go): indexing was
// 69–79% of a serial append's CPU, and it costs far less a row when many
// rows share one transaction (one segment, one merge step). Search covers
// the rows still queued (search_tail.go), so every acknowledged message
// is found all the same.

import (
	"context"
	"fmt"

	"github.com/sessiondb/sessiondb/db/gen"
)

// indexSlice is the write that indexes the oldest rows of the queue, at
// most limit of them, and empties the queue up to the last one; *indexed
// is set to how many it took (0: the queue was empty). With the index
// marked stale it only empties them: the rebuild that clears the mark
// indexes everything. It is replayed like any write, and sets *indexed
// again on each run.
func indexSlice(limit int, indexed *int) txFunc {
	return func(ctx context.Context, tx gen.DBTX) error {
		slice, err := queries.FTSPendingSliceEnd(ctx, tx, int64(limit))
		if err != nil {
			return fmt.Errorf("index new messages: %w", err)
		}
		*indexed = int(slice.Queued)
		if slice.Queued == 0 {
			return nil
		}
		// One error text for both statements: the trigram statement's
		// savepoint is where the word index's pending data reaches disk, so
		// a failure there may be either index's.
		for _, stmt := range indexSliceSQL {
			if _, err := tx.ExecContext(ctx, stmt, slice.LastID); err != nil {
				return fmt.Errorf("index new messages: %w", err)
			}
		}
		return queries.FTSPendingClearThrough(ctx, tx, slice.LastID)
	}
}

// markFTSStaleAndDropQueue switches indexing off after the indexer found
// the index damaged: the mark, and the queue emptied (the rebuild at the
// next open indexes every row).
func markFTSStaleAndDropQueue(ctx context.Context, tx gen.DBTX) error {
	if err := markFTSStale(ctx, tx); err != nil {
		return err
	}
	return queries.FTSPendingClear(ctx, tx)
}

// indexSliceSQL indexes the queued rows up to an id into each index,
// skipping a row the index already holds (a rebuild run by hand that left
// the queue alone) and doing nothing while the index is marked stale.
// Hand-written: sqlc cannot see FTS5's shadow tables (*_docsize, one row
// per indexed message).
var indexSliceSQL = []string{
	`INSERT INTO messages_fts (rowid, content, tool_name, tool_text)
	 SELECT m.id, m.content, m.tool_name, m.tool_text FROM fts_pending p JOIN messages m ON m.id = p.id
	 WHERE p.id <= ?1
	   AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
	   AND NOT EXISTS (SELECT 1 FROM messages_fts_docsize d WHERE d.id = p.id)`,
	`INSERT INTO messages_fts_trigram (rowid, content, tool_text)
	 SELECT m.id, m.content, m.tool_text FROM fts_pending p JOIN messages m ON m.id = p.id
	 WHERE p.id <= ?1
	   AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
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
