package db

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessiondb/sessiondb/db/gen"
)

// Health is what Verify found.
type Health string

const (
	// HealthAbsent: no file at the path.
	HealthAbsent Health = "absent"
	// HealthEmpty: a zero-length file (SQLite treats it as a new database).
	HealthEmpty Health = "empty"
	// HealthVerified: integrity_check and the FTS probe passed.
	HealthVerified Health = "verified"
	// HealthCorrupt: not a SQLite file, or SQLite reports damage.
	HealthCorrupt Health = "corrupt"
	// HealthBusy: another process's lock kept the check from running
	// reliably; check again later.
	HealthBusy Health = "busy"
)

// VerifyReport is the outcome of Verify.
type VerifyReport struct {
	Path   string
	Health Health
	// Details holds the first lines of PRAGMA integrity_check (or why the
	// file is not a database) when Health is not verified.
	Details []string
	// FTS is the full-text index probe's result: "ok", or what failed.
	FTS string
}

// maxVerifyDetails caps the integrity_check lines kept in a report.
const maxVerifyDetails = 20

// Verify checks the database at path without changing it: the file
// header, PRAGMA integrity_check (which also checks the FTS5 indexes
// against their content) and an FTS read probe. It returns an error only
// when the check itself could not run (for example, no permission).
func Verify(ctx context.Context, path string) (VerifyReport, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return VerifyReport{}, opErr("verify", "", err)
	}
	r := VerifyReport{Path: abs}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Health = HealthAbsent
		return r, nil
	case err != nil:
		return r, opErr("verify", "", err)
	case fi.IsDir():
		return r, opErr("verify", "", fmt.Errorf("%w: %s is a directory", ErrInvalidInput, abs))
	case fi.Size() == 0:
		r.Health = HealthEmpty
		return r, nil
	}
	if state, why, err := readHeader(abs); err != nil {
		return r, opErr("verify", "", err)
	} else if state != headerSQLite {
		r.Health, r.Details = HealthCorrupt, []string{why}
		return r, nil
	}

	probe, err := openDB(abs, kindProbe, 1, "")
	if err != nil {
		return r, opErr("verify", "", err)
	}
	defer probe.Close()
	rows, err := probe.QueryContext(ctx, "PRAGMA integrity_check") // sqlc cannot express PRAGMA
	if err == nil {
		for rows.Next() {
			var line string
			if err = rows.Scan(&line); err != nil {
				break
			}
			if len(r.Details) < maxVerifyDetails {
				r.Details = append(r.Details, line)
			}
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	switch {
	case err != nil && isLockError(err):
		r.Health, r.Details = HealthBusy, []string{err.Error()}
		return r, nil
	case err != nil:
		r.Health, r.Details = HealthCorrupt, []string{mapDriverError(err).Error()}
		return r, nil
	}
	r.FTS = ftsProbe(ctx, probe)
	if len(r.Details) == 1 && r.Details[0] == "ok" && (r.FTS == "ok" || strings.HasPrefix(r.FTS, "absent")) {
		r.Health, r.Details = HealthVerified, nil
	} else {
		r.Health = HealthCorrupt
	}
	return r, nil
}

// ftsProbe runs one full-text query through each index.
func ftsProbe(ctx context.Context, q gen.DBTX) string {
	var tables int64
	// Hand-written: sqlc cannot see sqlite_schema.
	err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_schema WHERE name IN ('messages_fts', 'messages_fts_trigram')").Scan(&tables)
	switch {
	case err != nil:
		return err.Error()
	case tables == 0:
		return "absent (no sessiondb schema yet)"
	}
	if _, err := queries.FTSProbe(ctx, q, "sessiondb"); err != nil {
		return "messages_fts: " + err.Error()
	}
	if _, err := queries.FTSTrigramProbe(ctx, q, "sessiondb"); err != nil {
		return "messages_fts_trigram: " + err.Error()
	}
	return "ok"
}
