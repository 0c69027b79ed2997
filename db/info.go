package db

import (
	"context"
	"database/sql"
	"errors"

	"github.com/sessiondb/sessiondb/db/gen"
)

// Info describes what is inside a store and the state of its file: the
// figures `sessiondb stats` shows. Unlike Stats it reads the database.
type Info struct {
	Path          string
	Sessions      int64
	Messages      int64
	FileBytes     int64
	WALBytes      int64
	PageSize      int64
	PageCount     int64
	FreePages     int64
	FreelistRatio float64 // FreePages / PageCount: what a VACUUM would give back
	// FTSStale says the full-text index is marked stale (search scans
	// instead; the next writable open rebuilds it).
	FTSStale      bool
	SchemaVersion int64
	JournalMode   string
	// LastPrune and LastVacuum are RFC 3339 times, "" when never.
	LastPrune  string
	LastVacuum string
}

// Info reads the store's figures. The pragmas and goose's version table are
// read with hand-written SQL: sqlc parses neither PRAGMA statements nor
// tables outside schema/.
func (s *Store) Info(ctx context.Context) (Info, error) {
	in := Info{Path: s.path}
	in.FileBytes, in.WALBytes = fileSize(s.path), fileSize(s.path+"-wal")
	err := s.snapshot(ctx, "get info", "", func(q gen.DBTX) error {
		var err error
		if in.Sessions, err = queries.SessionCount(ctx, q); err != nil {
			return err
		}
		if in.Messages, err = queries.MessageCount(ctx, q); err != nil {
			return err
		}
		for stmt, dst := range map[string]any{
			"PRAGMA page_size":      &in.PageSize,
			"PRAGMA page_count":     &in.PageCount,
			"PRAGMA freelist_count": &in.FreePages,
			"PRAGMA journal_mode":   &in.JournalMode,
			schemaVersionSQL:        &in.SchemaVersion,
		} {
			if err := q.QueryRowContext(ctx, stmt).Scan(dst); err != nil {
				return err
			}
		}
		for key, dst := range map[string]*string{"last_prune": &in.LastPrune, "last_vacuum": &in.LastVacuum} {
			v, err := queries.MetaGet(ctx, q, key)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			*dst = v
		}
		in.FTSStale, err = ftsMarkedStale(ctx, q)
		return err
	})
	if in.PageCount > 0 {
		in.FreelistRatio = float64(in.FreePages) / float64(in.PageCount)
	}
	return in, err
}
