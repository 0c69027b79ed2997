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
	if err := queries.FTSIndexPending(ctx, tx); err != nil {
		return fmt.Errorf("index new messages: %w", err)
	}
	if err := queries.FTSTrigramIndexPending(ctx, tx); err != nil {
		return fmt.Errorf("index new messages: %w", err)
	}
	return queries.FTSPendingClear(ctx, tx)
}
