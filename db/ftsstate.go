package db

// The full-text index's state: marked stale after damage (writes go on
// without indexing), rebuilt at the next writable open, and its queue of
// rows still to index drained there.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
)

// metaFTSStale marks the full-text index as damaged: the FTS triggers
// stand down (migration 2) and the next writable open rebuilds it.
const metaFTSStale = "fts_stale"

// ftsIndexes are the two full-text indexes, by table name.
var ftsIndexes = []string{"messages_fts", "messages_fts_trigram"}

// ftsMarkedStale reports whether a write marked the full-text index
// damaged (metaFTSStale).
func ftsMarkedStale(ctx context.Context, q gen.DBTX) (bool, error) {
	_, err := queries.MetaGet(ctx, q, metaFTSStale)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// reconcileFTS rebuilds the full-text indexes at open when a write
// marked them damaged or one forgot its segments (ftsstructure.go), and
// indexes rows that a writer which does not know the index queue (the
// sqlite3 shell) or a process that ended before its indexer ran left in
// it. The common case costs one read transaction, no write lock.
func reconcileFTS(ctx context.Context, w *writer, patience time.Duration) error {
	// A read of a few rows: not bound by what is left of Open's patience,
	// which a slow machine may have spent on the open itself (it failed
	// Open with "interrupted" at load 30, with nothing to wait for).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	stale, queued, forgotten, markBad, err := ftsState(sctx, w)
	cancel()
	if err != nil {
		return err
	}
	if markBad != "" && !stale {
		// New messages would be left out of the indexes and of Search's
		// tail: rebuild, which sets the mark again.
		if err := w.write(ctx, patience, markFTSStaleAndDropQueue); err != nil {
			return err
		}
		w.log.Warn("sessiondb: the full-text index is rebuilt: its mark is damaged", "path", w.path, "mark", markBad)
		stale, queued = true, false
	}
	if forgotten != "" && !stale {
		// Before the queue: indexing it would write over the segments the
		// index forgot (ftsstructure.go). The rebuild empties the queue.
		var rebuilt string
		if err := w.write(ctx, patience, rebuildForgotten(&rebuilt)); err != nil {
			return err
		}
		if rebuilt != "" {
			w.log.Warn("sessiondb: the full-text index was rebuilt: its structure record listed none of its segments", "path", w.path, "index", rebuilt)
			return nil
		}
		// Mended by another process meanwhile: the queue is as it was.
	}
	if queued && !stale {
		// Index what was left, within part of Open's patience: a long
		// backlog is the background indexer's (Search finds queued rows
		// meanwhile), and must not make Open fail. The slices may find the
		// index damaged and mark it stale: look again.
		ictx, cancel := context.WithTimeout(ctx, min(patience/2, openIndexBudget))
		_, _ = w.indexAll(ictx) // what it could not do, the indexer does
		cancel()
		// A read of two rows: not bound by what is left of the patience,
		// which the indexing may have used up (a slow machine overruns).
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err = w.read(sctx, func(q gen.DBTX) (err error) {
			stale, err = ftsMarkedStale(sctx, q)
			return err
		})
		cancel()
		if err != nil {
			return err
		}
	}
	if !stale {
		return nil
	}
	if err := w.write(ctx, patience, rebuildFTSIfStale); err != nil {
		return err
	}
	w.log.Warn("sessiondb: the full-text index was rebuilt after damage", "path", w.path)
	return nil
}

// ftsState reads whether the full-text index is marked stale, whether
// rows wait in its queue, which index, if any, forgot its segments, and
// what is wrong with the mark, if anything (ftsMarkDamage).
func ftsState(ctx context.Context, w *writer) (stale, queued bool, forgotten, markBad string, err error) {
	err = w.read(ctx, func(q gen.DBTX) error {
		var err error
		if stale, err = ftsMarkedStale(ctx, q); err != nil {
			return err
		}
		if markBad, err = ftsMarkDamage(ctx, q); isDamage(err) {
			// The messages table cannot be read: nothing here can be
			// brought up to date, and the first write halts on it.
			return nil
		} else if err != nil || markBad != "" {
			return err
		}
		if queued, err = queries.FTSPendingAny(ctx, q); err != nil {
			return err
		}
		forgotten, err = ftsForgotten(ctx, q)
		return err
	})
	return stale, queued, forgotten, markBad, err
}

// ftsMarkDamage says what is wrong with fts_mark, "" when nothing is: its
// one row missing (every new message would be left out of the indexes and
// of Search's tail), or its mark past the ids SQLite may still give a new
// message — the larger of the highest id and the messages' AUTOINCREMENT
// sequence — so that a new message would be taken for indexed.
// Hand-written: sqlc cannot see sqlite_sequence.
func ftsMarkDamage(ctx context.Context, q gen.DBTX) (string, error) {
	var rows, mark, next int64
	err := q.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM fts_mark),
		COALESCE((SELECT MAX(indexed_through) FROM fts_mark), 0),
		MAX(COALESCE((SELECT MAX(id) FROM messages), 0), COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0))`).Scan(&rows, &mark, &next)
	switch {
	case err != nil:
		return "", fmt.Errorf("read the index mark: %w", err)
	case rows != 1:
		return fmt.Sprintf("fts_mark holds %d rows, not 1", rows), nil
	case mark > next:
		return fmt.Sprintf("fts_mark is at message %d, past the last id given, %d", mark, next), nil
	}
	return "", nil
}

// rebuildFTSIfStale rebuilds both full-text indexes from the messages table
// when a write marked them damaged, and clears the mark.
func rebuildFTSIfStale(ctx context.Context, tx gen.DBTX) error {
	if stale, err := ftsMarkedStale(ctx, tx); err != nil || !stale {
		return err
	}
	if err := rebuildFTS(ctx, tx, ""); err != nil {
		return err
	}
	// The rebuild indexed every row: a queued one would be indexed twice,
	// a deleted one forgotten again. A file from before migration 4 has no
	// queue, one from before migration 11 no fts_deleted.
	for _, queue := range []struct {
		table string
		clear func(context.Context, gen.DBTX) error
	}{{"fts_pending", queries.FTSPendingClear}, {"fts_deleted", queries.FTSDeletedClear}} {
		if ok, err := hasTable(ctx, tx, queue.table); err != nil {
			return fmt.Errorf("rebuild full-text index: %w", err)
		} else if ok {
			if err := queue.clear(ctx, tx); err != nil {
				return fmt.Errorf("rebuild full-text index: %w", err)
			}
		}
	}
	_, err := queries.MetaDelete(ctx, tx, metaFTSStale)
	return err
}

// markFTSStale is the write that switches indexing off after damage.
func markFTSStale(ctx context.Context, tx gen.DBTX) error {
	return queries.MetaUpsert(ctx, tx, gen.MetaUpsertParams{Key: metaFTSStale, Value: "1", UpdatedAt: now()})
}
