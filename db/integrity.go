package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/db/internal/forensics"
	"github.com/sessiondb/sessiondb/db/internal/readonlywal"
	"github.com/sessiondb/sessiondb/internal/fsx"
	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// Health is what Verify found.
type Health string

const (
	// HealthAbsent: no file at the path.
	HealthAbsent Health = "absent"
	// HealthEmpty: a zero-length file (SQLite treats it as a new
	// database), or a SQLite database without a single schema object.
	HealthEmpty Health = "empty"
	// HealthVerified: integrity_check, the FTS probe and the index coverage
	// check passed (or the index is marked stale: the data is fine and the
	// next writable open rebuilds it).
	HealthVerified Health = "verified"
	// HealthCorrupt: not a SQLite file, or SQLite reports damage.
	HealthCorrupt Health = "corrupt"
	// HealthBusy: another process's lock kept the check from running
	// reliably; check again later.
	HealthBusy Health = "busy"
	// HealthNotAStore: the path holds something that is not a sessiondb
	// store (another program's SQLite database, a text file, a device);
	// Details say what. It is not damage, and Repair refuses it.
	HealthNotAStore Health = "not a store"
)

// VerifyReport is the outcome of Verify.
type VerifyReport struct {
	Path   string
	Health Health
	// Details holds the first lines of PRAGMA integrity_check (or why the
	// file is not a database) when Health is not verified.
	Details []string
	// FTS is the full-text indexes' result: "ok"; "stale: …" when a write
	// marked them damaged (rebuilt at the next writable open); "absent …"
	// before the schema exists; otherwise what failed.
	FTS string
}

// maxVerifyDetails caps the integrity_check lines kept in a report.
const maxVerifyDetails = 20

// Verify checks the database at path without changing it: the file
// header, PRAGMA integrity_check (which checks the FTS5 indexes' own
// structure, not that they match the messages), an FTS read probe, and
// that each index holds exactly the messages it should (none missing but
// those queued for indexing, none extra). It returns an error only when
// the check itself could not run (for example, no permission).
func Verify(ctx context.Context, path string) (VerifyReport, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return VerifyReport{}, opErr("verify", "", err)
	}
	r := VerifyReport{Path: abs}
	state, err := inspectPath(ctx, abs, "")
	var notStore *NotAStoreError
	switch {
	case errors.As(err, &notStore):
		r.Health, r.Details = HealthNotAStore, []string{notStore.Found}
		return r, nil
	case err != nil:
		return r, opErr("verify", "", err)
	case state == pathAbsent:
		r.Health = HealthAbsent
		return r, nil
	case state == pathEmpty:
		r.Health = HealthEmpty
		return r, nil
	}
	if state, why, err := forensics.ReadHeader(abs); err != nil {
		return r, opErr("verify", "", err)
	} else if state != forensics.HeaderSQLite {
		r.Health, r.Details = HealthCorrupt, []string{why}
		return r, nil
	}
	// A check through a second name would read a WAL that is not the
	// writers' (and leave a -shm beside it).
	if err := refuseAliased(abs); err != nil {
		return r, opErr("verify", "", err)
	}

	// Verify changes nothing: a foreign WAL is reported, not moved.
	if why, release, err := forensics.IdleForeignWAL(abs); err != nil {
		return r, opErr("verify", "", err)
	} else if release(); why != "" {
		r.Health, r.Details = HealthCorrupt, []string{"foreign WAL: " + why +
			"; it was not checked with the file and is retired (never applied) by the next open or `sessiondb repair`"}
		return r, nil
	}

	kind := kindProbe
	if fsx.Writable(filepath.Dir(abs)) != nil { // a read-only mount or directory
		if kind, err = readOnlyKind(abs, slog.Default()); err != nil {
			return r, opErr("verify", "", err)
		}
	}
	probe, err := openDB(abs, kind, 1, readonlywal.VFS) // it only reads: a -wal it may not write is read
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
	case err != nil && !isDamage(err):
		return r, opErr("verify", "", resourceCause(abs, fmt.Errorf("integrity check could not run: %w", err)))
	case err != nil:
		r.Health, r.Details = HealthCorrupt, []string{mapDriverError(err).Error()}
		return r, nil
	}
	if r.FTS, err = ftsProbe(ctx, probe); err == nil && r.FTS == "ok" {
		r.FTS, err = ftsCoverage(ctx, probe)
	}
	switch {
	case err != nil && isLockError(err):
		r.Health, r.Details = HealthBusy, []string{err.Error()}
		return r, nil
	case err != nil && !isDamage(err):
		return r, opErr("verify", "", resourceCause(abs, fmt.Errorf("full-text check could not run: %w", err)))
	case err != nil:
		r.FTS = err.Error()
	}
	findings, err := schemaFindings(ctx, probe)
	if err == nil {
		var cells []string
		cells, err = badCells(ctx, probe)
		findings = append(findings, cells...)
	}
	if err != nil {
		if isLockError(err) {
			r.Health, r.Details = HealthBusy, []string{err.Error()}
			return r, nil
		}
		findings = []string{err.Error()}
	}
	if len(findings) > 0 && len(r.Details) == 1 && r.Details[0] == "ok" {
		r.Details = nil
	}
	r.Details = append(r.Details, findings...)
	if len(r.Details) == 1 && r.Details[0] == "ok" && (r.FTS == "ok" || strings.HasPrefix(r.FTS, "absent") || strings.HasPrefix(r.FTS, "stale")) {
		r.Health, r.Details = HealthVerified, nil
	} else {
		r.Health = HealthCorrupt
	}
	return r, nil
}

// ftsProbe runs one full-text query through each index. Its error is what
// failed; whether that is damage is the caller's call (isDamage).
func ftsProbe(ctx context.Context, q gen.DBTX) (string, error) {
	indexed, err := hasTable(ctx, q, "messages_fts")
	switch {
	case err != nil:
		return "", err
	case !indexed:
		return "absent (no sessiondb schema yet)", nil
	}
	if _, err := queries.FTSProbe(ctx, q, "sessiondb"); err != nil {
		return "", fmt.Errorf("messages_fts: %w", err)
	}
	// The trigram index keeps no positions: it is asked as Search asks it.
	match, _, _ := searchtext.Terms{"sessiondb"}.TrigramMatch()
	if _, err := queries.FTSTrigramProbe(ctx, q, match); err != nil {
		return "", fmt.Errorf("messages_fts_trigram: %w", err)
	}
	return "ok", nil
}

// isDamage reports whether a check's error says the file is damaged, as
// opposed to the check being kept from running: structural damage
// (CORRUPT, NOTADB), a filesystem that returned garbage (IOERR_CORRUPTFS),
// or the plain ERROR SQLite gives for a malformed full-text index. A lock,
// a permission, a read-only medium, a full disk, no descriptors left, an
// interrupt — every other cause — is not damage: Verify returns it as an
// error ("could not check").
func isDamage(err error) bool {
	var code sqlite3.ErrorCode
	if !errors.As(err, &code) {
		return false
	}
	return code == sqlite3.CORRUPT || code == sqlite3.NOTADB || code == sqlite3.ERROR ||
		errors.Is(err, sqlite3.IOERR_CORRUPTFS)
}

// ftsCoverage checks that each full-text index holds one document per
// message — none missing except rows still queued for indexing
// (migration 4) or past the mark (migration 12), none past the mark, none
// left over from a deleted row except those queued to
// be forgotten (migration 11) — by comparing the index's document-size
// table with messages, all in one read snapshot (a writer committing
// between two counts must not look like damage). It cannot check the
// postings themselves; it catches the ways the queue could go wrong (a
// row never indexed, one indexed after it was deleted).
// An index marked stale is reported as such: the next writable open
// rebuilds it. An error means the check could not run.
func ftsCoverage(ctx context.Context, d *sql.DB) (string, error) {
	tx, err := d.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if stale, err := ftsMarkedStale(ctx, tx); err != nil {
		return "", err
	} else if stale {
		return "stale: marked damaged by a write; the next writable open rebuilds it", nil
	}
	queue, err := hasTable(ctx, tx, "fts_pending")
	if err != nil {
		return "", err
	}
	// A file from before migration 4 has no queue; one from before
	// migration 11 has no queue of deleted rows (its triggers forget them
	// at once).
	notQueued, notDeleted := "", ""
	if queue {
		notQueued = "AND m.id NOT IN (SELECT id FROM fts_pending)"
	}
	// From migration 12 the messages past the mark wait too, and no index
	// may hold one.
	marked, err := hasTable(ctx, tx, "fts_mark")
	if err != nil {
		return "", err
	}
	if marked {
		if bad, err := ftsMarkDamage(ctx, tx); err != nil || bad != "" {
			return bad, err
		}
		notQueued += " AND m.id <= (SELECT indexed_through FROM fts_mark)"
	}
	if deletes, err := hasTable(ctx, tx, "fts_deleted"); err != nil {
		return "", err
	} else if deletes {
		notDeleted = "AND d.id NOT IN (SELECT id FROM fts_deleted)"
	}
	// A row larger than the indexes take is never in them (indexableRow,
	// with the mark: an older file indexed every row, by triggers).
	indexable := ""
	if marked {
		indexable = "AND " + indexableRow
	}
	for _, index := range ftsIndexes {
		// Hand-written: sqlc cannot see FTS5's shadow tables.
		pastMark := "0"
		if marked {
			pastMark = "(SELECT COUNT(*) FROM " + index + "_docsize d WHERE d.id > (SELECT indexed_through FROM fts_mark))"
		}
		var missing, extra, past int64
		err := tx.QueryRowContext(ctx, `SELECT
			(SELECT COUNT(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM `+index+`_docsize d WHERE d.id = m.id) `+indexable+` `+notQueued+`),
			(SELECT COUNT(*) FROM `+index+`_docsize d WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = d.id) `+notDeleted+`),
			`+pastMark).Scan(&missing, &extra, &past)
		switch {
		case err != nil:
			return "", fmt.Errorf("%s: %w", index, err)
		case missing != 0 || extra != 0:
			return fmt.Sprintf("%s: %d messages not indexed, %d index entries without a message", index, missing, extra), nil
		case past != 0:
			return fmt.Sprintf("%s: %d index entries past the mark", index, past), nil
		}
	}
	return "ok", nil
}
