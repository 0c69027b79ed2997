package db

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessiondb/sessiondb/db/internal/backup"
)

// salvageTables are copied in this order (parents before children).
var salvageTables = []string{"sessions", "meta", "messages", "compression_locks", "turn_leases", "session_model_usage"}

// salvageMaxRowID bounds the scan of a table whose largest rowid cannot
// be read.
const salvageMaxRowID = 1 << 22

// repairSalvage is the last strategy: a fresh database (full schema) is
// filled with every row that can still be read from the damaged copy,
// range by range, halving a range that hits an unreadable page down to
// single rows and skipping those. Sessions lost with their pages but
// still named by surviving messages come back as placeholders (source
// "salvaged"), and counters are recomputed from the rows.
func repairSalvage(ctx context.Context, damaged *sql.DB, damagedPath string) (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(damagedPath), ".sessiondb-salvage-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	freshPath := filepath.Join(dir, "fresh.db")
	s, err := Open(ctx, freshPath, Options{})
	if err != nil {
		return "", fmt.Errorf("create a fresh database: %w", err)
	}
	s.Close()

	c, err := damaged.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	// Hand-written throughout: salvage works on whatever schema survived,
	// across two attached files, which sqlc cannot describe.
	if _, err := c.ExecContext(ctx, "ATTACH DATABASE ? AS fresh", freshPath); err != nil {
		return "", fmt.Errorf("attach the fresh database: %w", err)
	}
	if _, err := c.ExecContext(ctx, "PRAGMA foreign_keys=OFF"); err != nil {
		return "", err
	}
	copied, skipped := 0, 0
	for _, t := range salvageTables {
		n, k := salvageTable(ctx, c, t)
		copied, skipped = copied+n, skipped+k
	}
	for _, stmt := range []string{
		`INSERT OR IGNORE INTO fresh.sessions (id, source, started_at)
		 SELECT session_id, 'salvaged', MIN(created_at) FROM fresh.messages
		 WHERE session_id NOT IN (SELECT id FROM fresh.sessions) GROUP BY session_id`,
		`UPDATE fresh.sessions SET
		   message_count = (SELECT COUNT(*) FROM fresh.messages m WHERE m.session_id = sessions.id),
		   tool_call_count = (SELECT COALESCE(SUM(json_array_length(m.tool_calls_json)), 0)
		                      FROM fresh.messages m WHERE m.session_id = sessions.id)`,
		`UPDATE fresh.sessions SET parent_session_id = NULL
		 WHERE parent_session_id NOT IN (SELECT id FROM fresh.sessions)`,
	} {
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			return "", fmt.Errorf("salvage: %w", err)
		}
	}
	// The copied rows are past the fresh file's index mark (migration
	// 12): index them all at once, which moves the mark past them.
	if err := rebuildFTS(ctx, c, "fresh."); err != nil {
		return "", fmt.Errorf("salvage: %w", err)
	}
	if _, err := c.ExecContext(ctx, "DETACH DATABASE fresh"); err != nil {
		return "", fmt.Errorf("salvage: %w", err)
	}
	if copied == 0 {
		return "", fmt.Errorf("salvage: no row could be read")
	}
	c.Close()
	damaged.Close()
	// The fresh file becomes the candidate that tryStrategy verifies.
	if err := backup.CopyDatabase(sideFiles{}, freshPath, damagedPath); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d rows copied, %d unreadable stretches skipped", copied, skipped), nil
}

// salvageTable copies what it can of one table; it returns the rows
// copied and the unreadable stretches skipped. Past an unreadable row it
// jumps ahead by a gap that doubles while reads keep failing, so a large
// lost region costs a few dozen probes, not one per rowid (rows inside a
// jump are given up with the region).
func salvageTable(ctx context.Context, c *sql.Conn, table string) (copied, skipped int) {
	hi := int64(salvageMaxRowID)
	var m sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT max(rowid) FROM main."+table).Scan(&m); err == nil && m.Valid {
		hi = m.Int64
	}
	// The id counter may name rows past the last one read (a damaged
	// b-tree's right edge), but not millions of them: an exhausted or
	// hostile counter (near 2^63) would have the scan walk empty ranges for
	// ever, at most 65,536 ids a read.
	var seq sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT seq FROM main.sqlite_sequence WHERE name = ?", table).Scan(&seq); err == nil && seq.Int64 > hi {
		hi = min(seq.Int64, hi+salvageMaxRowID)
	}
	insert := "INSERT OR IGNORE INTO fresh." + table + " SELECT * FROM main." + table + " WHERE rowid > ? AND rowid <= ?"
	lo, step := int64(-1)<<62, int64(1)<<62 // the first range covers every rowid up to 0
	gap := int64(1)
	for lo < hi && ctx.Err() == nil {
		res, err := c.ExecContext(ctx, insert, lo, lo+step)
		if err == nil {
			n, _ := res.RowsAffected()
			copied += int(n)
			lo += step
			gap = 1
			if lo >= 0 {
				step = min(max(step*2, 256), 1<<16)
			}
			continue
		}
		if step > 1 {
			step /= 2
			continue
		}
		if gap == 1 {
			skipped++
		}
		lo += gap
		gap *= 2
	}
	return copied, skipped
}
