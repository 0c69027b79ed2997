package db

// ftsqueue.go applies the changes waiting for the full-text indexes, a
// slice at a time (migrations 4, 5, 11 and 12).
//
// A new message waits by its id: the indexes hold no row past
// fts_mark.indexed_through, so the messages past it are the queue of new
// rows. The update trigger queues an edited row's id in fts_pending, and
// the update and delete triggers the old text of a row at or below the
// mark in fts_deleted. Appends (and deletes, and edits) commit their rows
// and those entries and nothing else. The background indexer
// (ftsindexer.go) applies them, oldest first, in write transactions of
// its own through the one writer (tx.go): indexing was 69–79% of a
// serial append's CPU, and it costs far less a row when many rows share
// one transaction (one segment, one merge step). Search covers the rows
// still waiting (search_tail.go), so every acknowledged message is found
// all the same.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sessiondb/sessiondb/db/gen"
)

// indexSlice is the write that applies the oldest changes waiting for
// the indexes, at most limit of them: deleted and edited rows' old text
// forgotten (fts_deleted), edited rows indexed again from their current
// text (fts_pending), then new rows — the messages past the mark, in id
// order — indexed and the mark moved past them. While more than one kind
// waits, forgetting takes at most half the slice and edits half of what
// is left, so a large delete does not keep new messages out of the index.
// A queued row whose old text still waits in fts_deleted is not indexed
// until that is forgotten: only fts_deleted has the text the index holds.
// *indexed is set to how many changes it applied (0: none waited). With
// the index marked stale it only empties the queues and moves the mark:
// the rebuild that clears the stale mark indexes everything. It is
// replayed like any write, and sets *indexed again on each run.
func indexSlice(limit int, indexed *int) txFunc {
	return func(ctx context.Context, tx gen.DBTX) error {
		*indexed = 0
		fresh, err := queries.FTSMarkSliceEnd(ctx, tx, int64(limit))
		if err != nil {
			return fmt.Errorf("index new messages: %w", markMissing(err))
		}
		deleted, err := queries.FTSDeletedSliceEnd(ctx, tx, int64(limit))
		if err != nil {
			return fmt.Errorf("index new messages: %w", err)
		}
		if deleted.Queued > int64(limit/2) {
			edits, err := queries.FTSEditsAny(ctx, tx)
			if err != nil {
				return fmt.Errorf("index new messages: %w", err)
			}
			if edits || fresh.Queued > 0 {
				if deleted, err = queries.FTSDeletedSliceEnd(ctx, tx, int64(max(limit/2, 1))); err != nil {
					return fmt.Errorf("index new messages: %w", err)
				}
			}
		}
		if deleted.Queued > 0 {
			if err := applySlice(ctx, tx, forgetSliceSQL, deleted.LastSeq); err != nil {
				return err
			}
			if err := queries.FTSDeletedClearThrough(ctx, tx, deleted.LastSeq); err != nil {
				return fmt.Errorf("index new messages: %w", err)
			}
			*indexed = int(deleted.Queued)
		}
		if rest := limit - *indexed; rest > 0 {
			if fresh.Queued > 0 {
				rest = max(rest/2, 1)
			}
			edited, err := queries.FTSPendingSliceEnd(ctx, tx, int64(rest))
			if err != nil {
				return fmt.Errorf("index new messages: %w", err)
			}
			if edited.Queued > 0 {
				if err := applySlice(ctx, tx, indexSliceSQL, edited.LastSeq); err != nil {
					return err
				}
				if err := queries.FTSPendingClearThrough(ctx, tx, edited.LastSeq); err != nil {
					return fmt.Errorf("index new messages: %w", err)
				}
				*indexed += int(edited.Queued)
			}
		}
		if rest := limit - *indexed; fresh.Queued > 0 && rest > 0 {
			if rest < limit {
				if fresh, err = queries.FTSMarkSliceEnd(ctx, tx, int64(rest)); err != nil {
					return fmt.Errorf("index new messages: %w", markMissing(err))
				}
			}
			if err := applySlice(ctx, tx, indexNewSQL, fresh.Mark, fresh.LastID); err != nil {
				return err
			}
			*indexed += int(fresh.Queued)
		} else if fresh.Queued > 0 || fresh.BehindSince == 0 {
			return nil // the mark stays
		}
		// The mark moves past what was indexed, and behind_since starts
		// over once nothing is past it (also when the rows appended since
		// it was set were deleted before they were indexed).
		if err := queries.FTSMarkAdvance(ctx, tx, fresh.LastID); err != nil {
			return fmt.Errorf("index new messages: %w", err)
		}
		return nil
	}
}

// applySlice runs a slice's statements with args: over a queue's entries
// up to a seq, or over the messages between the mark and a last id.
func applySlice(ctx context.Context, tx gen.DBTX, stmts []string, args ...any) error {
	// One error text for every statement: the trigram statement's
	// savepoint is where the word index's pending data reaches disk, so a
	// failure there may be either index's.
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("index new messages: %w", err)
		}
	}
	return nil
}

// errMarkMissing is fts_mark without its row: damage (only another
// writer removes it), taken for the index's own (indexFailed), so that
// indexing stops and Search scans the messages until the next open
// rebuilds the index and sets the mark.
var errMarkMissing = errors.New("the full-text index's mark (fts_mark) is missing")

// markMissing is errMarkMissing for a read of the mark that found no row.
func markMissing(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return errMarkMissing
	}
	return err
}

// markFTSStaleAndDropQueue switches indexing off after the indexer found
// the index damaged: the stale mark, the queues emptied (the rebuild at
// the next open indexes every row), and a missing index mark put back, so
// that the indexer's slices run (and index nothing) meanwhile.
func markFTSStaleAndDropQueue(ctx context.Context, tx gen.DBTX) error {
	if err := markFTSStale(ctx, tx); err != nil {
		return err
	}
	if err := queries.FTSPendingClear(ctx, tx); err != nil {
		return err
	}
	if err := queries.FTSDeletedClear(ctx, tx); err != nil {
		return err
	}
	return queries.FTSMarkRestore(ctx, tx)
}

// forgetSliceSQL makes each index forget the rows queued in fts_deleted
// up to a seq, by their old text, where it holds them: a row deleted or
// edited before it was ever indexed is not in it, and a contentless
// index told to forget a row it never held would count its documents
// wrong. Nothing is done while the index is marked stale.
// Hand-written: sqlc cannot see FTS5's shadow tables (*_docsize, one row
// per indexed message), and its parser rejects FTS5's command column.
var forgetSliceSQL = []string{
	`INSERT INTO messages_fts (messages_fts, rowid, content, tool_name, tool_text)
	 SELECT 'delete', d.id, d.content, d.tool_name, d.tool_text FROM fts_deleted d
	 WHERE d.seq <= ?1
	   AND EXISTS (SELECT 1 FROM messages_fts_docsize z WHERE z.id = d.id)
	   AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
	 ORDER BY d.seq`,
	`INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content, tool_text)
	 SELECT 'delete', d.id, d.content, d.tool_text FROM fts_deleted d
	 WHERE d.seq <= ?1
	   AND EXISTS (SELECT 1 FROM messages_fts_trigram_docsize z WHERE z.id = d.id)
	   AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
	 ORDER BY d.seq`,
}

// indexableRow is the condition on a messages row (as m) that the
// indexes take it: its indexed text no larger than maxMessageBytes
// (limits.go). A larger row, which only an older build or another program
// can have written, ran the driver out of memory and panicked the indexer
// on every open (issue 38); it is stored and read, never indexed.
// octet_length reads the row's length without loading its text. The
// forget statements need no such condition: they forget only what an
// index holds (its docsize row).
var indexableRow = "octet_length(m.content) + COALESCE(octet_length(m.tool_name), 0) + COALESCE(octet_length(m.tool_text), 0) <= " +
	strconv.Itoa(maxMessageBytes)

// indexSliceSQL indexes the rows queued in fts_pending up to a seq from
// their current text, once however often each was queued, but for those
// whose old text still waits in fts_deleted (FTSPendingSliceEnd leaves
// them out too, and they stay queued). A row the index already holds with
// no old text queued was indexed behind the queue's back, from its current
// text: it is skipped, not indexed twice. Nothing is done while the index
// is marked stale. Hand-written, as forgetSliceSQL.
var indexSliceSQL = []string{
	`INSERT INTO messages_fts (rowid, content, tool_name, tool_text)
	 SELECT m.id, m.content, m.tool_name, m.tool_text FROM messages m
	 WHERE m.id IN (SELECT p.id FROM fts_pending p WHERE p.seq <= ?1 AND NOT EXISTS (SELECT 1 FROM fts_deleted d WHERE d.id = p.id))
	   AND ` + indexableRow + `
	   AND NOT EXISTS (SELECT 1 FROM messages_fts_docsize z WHERE z.id = m.id)
	   AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')`,
	`INSERT INTO messages_fts_trigram (rowid, content, tool_text)
	 SELECT m.id, m.content, m.tool_text FROM messages m
	 WHERE m.id IN (SELECT p.id FROM fts_pending p WHERE p.seq <= ?1 AND NOT EXISTS (SELECT 1 FROM fts_deleted d WHERE d.id = p.id))
	   AND ` + indexableRow + `
	   AND NOT EXISTS (SELECT 1 FROM messages_fts_trigram_docsize z WHERE z.id = m.id)
	   AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')`,
}

// indexNewSQL indexes the messages past the mark (?1) up to a last id
// (?2) from their text. No index holds a row past the mark, nor has it
// anything of one to forget (the delete and update triggers queue only
// rows at or below it). A row an index holds all the same was put there
// by another writer — damage, which Verify reports — and is skipped, so
// that the slice does not fail on it. Nothing is done while the index is
// marked stale. Hand-written, as forgetSliceSQL.
var indexNewSQL = []string{
	`INSERT INTO messages_fts (rowid, content, tool_name, tool_text)
	 SELECT m.id, m.content, m.tool_name, m.tool_text FROM messages m
	 WHERE m.id > ?1 AND m.id <= ?2 AND ` + indexableRow + `
	   AND NOT EXISTS (SELECT 1 FROM messages_fts_docsize z WHERE z.id = m.id)
	   AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')`,
	`INSERT INTO messages_fts_trigram (rowid, content, tool_text)
	 SELECT m.id, m.content, m.tool_text FROM messages m
	 WHERE m.id > ?1 AND m.id <= ?2 AND ` + indexableRow + `
	   AND NOT EXISTS (SELECT 1 FROM messages_fts_trigram_docsize z WHERE z.id = m.id)
	   AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')`,
}

// rebuildFTS empties both indexes and indexes every message again, in
// the schema named by prefix ("" or an attached schema's "name."). A
// contentless index (its content option the empty string, migration 11)
// has no content to 'rebuild' itself from: it is emptied and filled from
// the messages. A file from before that version keeps its
// external-content index, which 'rebuild' reads from the messages table
// by its own columns. Hand-written: sqlc cannot see sqlite_schema, and
// its parser rejects FTS5's command column.
func rebuildFTS(ctx context.Context, q gen.DBTX, prefix string) error {
	var def string
	err := q.QueryRowContext(ctx, "SELECT sql FROM "+prefix+"sqlite_schema WHERE type = 'table' AND name = 'messages_fts'").Scan(&def)
	if err != nil {
		return fmt.Errorf("rebuild full-text index: %w", err)
	}
	stmts := []string{
		"INSERT INTO " + prefix + "messages_fts (messages_fts) VALUES ('rebuild')",
		"INSERT INTO " + prefix + "messages_fts_trigram (messages_fts_trigram) VALUES ('rebuild')",
	}
	if strings.Contains(def, "content = ''") {
		stmts = []string{
			"INSERT INTO " + prefix + "messages_fts (messages_fts) VALUES ('delete-all')",
			"INSERT INTO " + prefix + "messages_fts_trigram (messages_fts_trigram) VALUES ('delete-all')",
			"INSERT INTO " + prefix + "messages_fts (rowid, content, tool_name, tool_text) SELECT id, content, tool_name, tool_text FROM " + prefix + "messages m WHERE " + indexableRow,
			"INSERT INTO " + prefix + "messages_fts_trigram (rowid, content, tool_text) SELECT id, content, tool_text FROM " + prefix + "messages m WHERE " + indexableRow,
		}
	}
	// Every message is indexed: none is past the mark (version 12).
	if marked, err := hasTableIn(ctx, q, prefix, "fts_mark"); err != nil {
		return fmt.Errorf("rebuild full-text index: %w", err)
	} else if marked {
		stmts = append(stmts, "INSERT OR REPLACE INTO "+prefix+"fts_mark (id, indexed_through, behind_since) VALUES (1, COALESCE((SELECT MAX(id) FROM "+prefix+"messages), 0), 0)")
	}
	for _, stmt := range stmts {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("rebuild full-text index: %w", err)
		}
	}
	return nil
}

// hasTable reports whether the file has a table or virtual table of that
// name — fts_pending (migration 4: repair and Verify see older files,
// which index from their triggers) or the indexes themselves.
// Hand-written: sqlc cannot see sqlite_schema.
func hasTable(ctx context.Context, q gen.DBTX, name string) (bool, error) {
	return hasTableIn(ctx, q, "", name)
}

// hasTableIn is hasTable in the schema named by prefix ("" or an attached
// schema's "name.").
func hasTableIn(ctx context.Context, q gen.DBTX, prefix, name string) (bool, error) {
	var n int64
	err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+prefix+"sqlite_schema WHERE type = 'table' AND name = ?", name).Scan(&n)
	return n != 0, err
}
