package db

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
)

// VacuumResult says what Vacuum did.
type VacuumResult struct {
	// SizeBefore and SizeAfter are the bytes of the database file plus its
	// WAL.
	SizeBefore, SizeAfter int64
	// FreePagesBefore and FreePagesAfter count the file's unused pages.
	FreePagesBefore, FreePagesAfter int64
}

// Vacuum compacts the database file: it optimizes the full-text index,
// checkpoints (PASSIVE), rebuilds the file (VACUUM), and only then
// truncates the WAL — TRUNCATE is used nowhere else. VACUUM holds the write
// lock for as long as it runs, so it is refused (ErrLocked) while another
// process has the database open (detected on Linux; elsewhere it runs, and
// other writers wait for it within their patience). It records meta
// "last_vacuum" (before the rebuild: the WAL is left empty).
//
// The statements are hand-written: VACUUM and the checkpoint pragmas are
// maintenance commands, not queries, and cannot run inside the write path's
// transactions.
func (s *Store) Vacuum(ctx context.Context) (VacuumResult, error) {
	const op = "vacuum"
	var res VacuumResult
	if s.w == nil {
		return res, opErr(op, "", s.readOnly)
	}
	err := s.w.exclusive(ctx, func(ctx context.Context, c *sql.Conn) error {
		// Checked with this store's writer held, so no write of ours races it.
		if who, _ := otherOpeners(s.path); len(who) > 0 {
			return fmt.Errorf("%w: the database is open in other processes (%s); "+
				"VACUUM would hold them up — run it when they are done", ErrLocked, strings.Join(who, "; "))
		}
		res.SizeBefore = fileAndWALSize(s.path)
		if err := c.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&res.FreePagesBefore); err != nil {
			return err
		}
		if !s.w.ftsOff.Load() {
			for _, stmt := range []string{
				"INSERT INTO messages_fts (messages_fts) VALUES ('optimize')",
				"INSERT INTO messages_fts_trigram (messages_fts_trigram) VALUES ('optimize')",
			} {
				if _, err := c.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("optimize the full-text index: %w", err)
				}
			}
		}
		if s.w.wal {
			if err := checkpointPassive(ctx, c); err != nil {
				return err
			}
		}
		if _, err := c.ExecContext(ctx, "VACUUM"); err != nil {
			return err
		}
		// Recorded before the truncation, so the WAL is empty when Vacuum returns.
		if err := queries.MetaUpsert(ctx, c, gen.MetaUpsertParams{Key: "last_vacuum",
			Value: time.Now().UTC().Format(time.RFC3339), UpdatedAt: now()}); err != nil {
			return err
		}
		if s.w.wal {
			if _, err := c.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				return err
			}
		}
		res.SizeAfter = fileAndWALSize(s.path)
		return c.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&res.FreePagesAfter)
	})
	return res, opErr(op, "", err)
}

// fileAndWALSize is the bytes of the database file plus its WAL.
func fileAndWALSize(path string) int64 { return fileSize(path) + fileSize(path+"-wal") }

// fileSize is a file's size, 0 when it is absent.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
