package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// hermesSource is a Hermes state.db opened read-only, read in one snapshot
// (a read transaction): a Hermes process writing meanwhile is neither seen
// half-way nor disturbed.
//
// The SQL here is hand-written, not sqlc's: it reads another program's
// schema, which differs between its versions, so columns are discovered
// (PRAGMA table_info) and rows are read by name.
type hermesSource struct {
	db *sql.DB
	tx *sql.Tx
	// tables and the columns of each, as the file has them.
	cols map[string]map[string]bool
}

// hermesRow is one source row by column name: int64, float64, string,
// []byte or nil.
type hermesRow map[string]any

// openHermes opens path read-only and starts the snapshot. A path that is
// not a SQLite file, or a SQLite file without Hermes's sessions and
// messages tables, is refused with a typed error.
func openHermes(ctx context.Context, path string) (*hermesSource, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: no file at %s", ErrNotFound, abs)
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrInvalidInput, abs)
	}
	d, err := openDB(abs, kindForeign, 1, "")
	if err != nil {
		return nil, err
	}
	tx, err := d.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		d.Close()
		return nil, sharedMemoryHint(mapDriverError(err))
	}
	src := &hermesSource{db: d, tx: tx, cols: map[string]map[string]bool{}}
	if err := src.loadSchema(ctx); err != nil {
		src.close()
		return nil, sharedMemoryHint(err)
	}
	for _, need := range []struct{ table, col string }{
		{"sessions", "id"}, {"sessions", "source"}, {"sessions", "started_at"},
		{"messages", "id"}, {"messages", "session_id"}, {"messages", "role"}, {"messages", "timestamp"},
	} {
		if !src.cols[need.table][need.col] {
			src.close()
			return nil, fmt.Errorf("%w: %s is not a Hermes state.db (no %s.%s)", ErrInvalidInput, abs, need.table, need.col)
		}
	}
	return src, nil
}

// sharedMemoryHint explains a read-only refusal: even a reader of a WAL
// database writes the -shm file beside it (read marks), so a file owned by
// someone else, or in a directory this user cannot write, cannot be read
// live. Reading it as immutable would ignore its WAL, so it is not tried.
func sharedMemoryHint(err error) error {
	if !errors.Is(err, ErrReadOnly) {
		return err
	}
	return fmt.Errorf("%w (a WAL database is read through its -shm file, which this user cannot write or create: run as the file's owner, or import a copy of state.db made together with its -wal)", err)
}

func (h *hermesSource) close() {
	h.tx.Rollback()
	h.db.Close()
}

// loadSchema lists the tables and their columns.
func (h *hermesSource) loadSchema(ctx context.Context) error {
	rows, err := h.tx.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return mapDriverError(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return mapDriverError(err)
	}
	for _, t := range tables {
		cols := map[string]bool{}
		r, err := h.tx.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", t)
		if err != nil {
			return mapDriverError(err)
		}
		for r.Next() {
			var n string
			if err := r.Scan(&n); err != nil {
				r.Close()
				return err
			}
			cols[n] = true
		}
		r.Close()
		h.cols[t] = cols
	}
	return nil
}

func (h *hermesSource) has(table string) bool { return h.cols[table] != nil }

// query reads rows by name.
func (h *hermesSource) query(ctx context.Context, q string, args ...any) ([]hermesRow, error) {
	rows, err := h.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapDriverError(err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []hermesRow
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make(hermesRow, len(names))
		for i, n := range names {
			r[n] = vals[i]
		}
		out = append(out, r)
	}
	return out, mapDriverError(rows.Err())
}

// count runs a COUNT query.
func (h *hermesSource) count(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	err := h.tx.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, mapDriverError(err)
}

// sessionIDs lists the sessions oldest first, so parents mostly come before
// their children.
func (h *hermesSource) sessionIDs(ctx context.Context) ([]string, error) {
	rows, err := h.query(ctx, "SELECT id FROM sessions ORDER BY started_at, id")
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.str("id")
	}
	return ids, nil
}

func (h *hermesSource) session(ctx context.Context, id string) (hermesRow, error) {
	rows, err := h.query(ctx, "SELECT * FROM sessions WHERE id = ?", id)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}

// messages reads a page of a session's messages in id order.
func (h *hermesSource) messages(ctx context.Context, sessionID string, afterID int64, limit int) ([]hermesRow, error) {
	return h.query(ctx, "SELECT * FROM messages WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?",
		sessionID, afterID, limit)
}

func (h *hermesSource) usage(ctx context.Context, sessionID string) ([]hermesRow, error) {
	if !h.has("session_model_usage") {
		return nil, nil
	}
	return h.query(ctx, "SELECT * FROM session_model_usage WHERE session_id = ? ORDER BY rowid", sessionID)
}

// prompt resolves a system prompt stored by hash (newer Hermes versions).
func (h *hermesSource) prompt(ctx context.Context, hash string) (string, bool, error) {
	if !h.has("system_prompts") || hash == "" {
		return "", false, nil
	}
	rows, err := h.query(ctx, "SELECT prompt FROM system_prompts WHERE hash = ?", hash)
	if err != nil || len(rows) == 0 {
		return "", false, err
	}
	return rows[0].str("prompt"), true, nil
}

// fingerprint summarises what the source holds for a session — its row,
// its messages' ids and states, its usage — so a later import can tell in
// one query whether anything changed.
func (h *hermesSource) fingerprint(ctx context.Context, row hermesRow) (string, error) {
	id := row.str("id")
	hash := sha256.New()
	writeRow(hash, row)
	stats, err := h.query(ctx, `SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS top,
		COALESCE(SUM(active), 0) AS act, COALESCE(SUM(compacted), 0) AS cmp
		FROM messages WHERE session_id = ?`, id)
	if err != nil {
		return "", err
	}
	for _, s := range stats {
		writeRow(hash, s)
	}
	usage, err := h.usage(ctx, id)
	if err != nil {
		return "", err
	}
	for _, u := range usage {
		writeRow(hash, u)
	}
	return hex.EncodeToString(hash.Sum(nil)), nil
}

func writeRow(w interface{ Write([]byte) (int, error) }, r hermesRow) {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s=%T:%v\x00", k, r[k], r[k])
	}
}

// Typed access. Hermes stores whatever Python handed SQLite, so each
// reader accepts the neighbouring types too.

func (r hermesRow) str(k string) string {
	switch v := r[k].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return ""
}

func (r hermesRow) int(k string) int64 {
	switch v := r[k].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case string:
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n
	}
	return 0
}

func (r hermesRow) float(k string) float64 {
	switch v := r[k].(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	case string:
		f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f
	}
	return 0
}

// millis turns Hermes's Unix seconds (a float) into sessiondb's
// milliseconds; nil when the column is NULL.
func (r hermesRow) millis(k string) *int64 {
	switch r[k].(type) {
	case int64, float64:
	case string:
		if strings.TrimSpace(r.str(k)) == "" {
			return nil
		}
	default:
		return nil
	}
	f := r.float(k)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	ms := int64(math.Round(f * 1000))
	return &ms
}

// present reports whether a column holds a value worth keeping: not
// NULL, not empty, not zero.
func (r hermesRow) present(k string) bool {
	switch v := r[k].(type) {
	case nil:
		return false
	case string:
		return v != ""
	case []byte:
		return len(v) > 0
	case int64:
		return v != 0
	case float64:
		return v != 0
	}
	return true
}
