package hermes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

// hermesSource is a Hermes state.db opened read-only through the SQLite
// engine's one connection chokepoint (db.OpenForeign) and read in one
// snapshot: a Hermes process writing meanwhile is neither seen half-way
// nor disturbed.
//
// The SQL here is hand-written, not sqlc's: it reads another program's
// schema, which differs between its versions, so columns are discovered
// (PRAGMA table_info) and rows are read by name.
type hermesSource struct {
	f *db.ForeignFile
	// tables and the columns of each, as the file has them.
	cols map[string]map[string]bool
	// version is the file's schema_version (0 when it has none).
	version int64
}

// hermesRow is one source row by column name: int64, float64, string,
// []byte or nil.
type hermesRow map[string]any

// openHermes opens path read-only and starts the snapshot. A path that is
// not a SQLite file, or a SQLite file without Hermes's sessions and
// messages tables, is refused with a typed error; so is a schema version
// this importer cannot read (*UnsupportedVersionError).
func openHermes(ctx context.Context, path string) (*hermesSource, error) {
	f, err := db.OpenForeign(ctx, path)
	if err != nil {
		return nil, err
	}
	src := &hermesSource{f: f, cols: map[string]map[string]bool{}}
	if err := src.loadSchema(ctx); err != nil {
		src.close()
		return nil, err
	}
	if err := src.readVersion(ctx); err != nil {
		src.close()
		return nil, err
	}
	for _, need := range []struct{ table, col string }{
		{"sessions", "id"}, {"sessions", "source"}, {"sessions", "started_at"},
		{"messages", "id"}, {"messages", "session_id"}, {"messages", "role"}, {"messages", "timestamp"},
	} {
		if src.cols[need.table][need.col] {
			continue
		}
		src.close()
		if src.version > 0 && src.has("sessions") && src.has("messages") {
			return nil, &UnsupportedVersionError{Path: path, Version: src.version, Missing: need.table + "." + need.col}
		}
		return nil, fmt.Errorf("%w: %s is not a Hermes state.db (no %s.%s)", store.ErrInvalidInput, path, need.table, need.col)
	}
	return src, nil
}

// readVersion reads schema_version, which every Hermes version wrote (one
// row); a file without it reads as version 0.
func (h *hermesSource) readVersion(ctx context.Context) error {
	if !h.hasCol("schema_version", "version") {
		return nil
	}
	rows, err := h.query(ctx, "SELECT MAX(version) AS version FROM schema_version")
	if err != nil || len(rows) == 0 {
		return err
	}
	h.version = rows[0].int("version")
	return nil
}

// UnsupportedVersionError refuses a Hermes file of a schema version this
// importer cannot read: one without a column every import needs (a
// session's id, source and start; a message's id, session, role and
// time). It matches store.ErrInvalidInput. Every version the reference
// store wrote has them; the others' columns are read as far as each
// version has them (see Import).
type UnsupportedVersionError struct {
	Path    string
	Version int64
	Missing string // the "table.column" the file lacks
}

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("%s: Hermes schema version %d cannot be imported: it has no %s", e.Path, e.Version, e.Missing)
}

func (e *UnsupportedVersionError) Is(target error) bool { return target == store.ErrInvalidInput }

func (h *hermesSource) close() { h.f.Close() }

// loadSchema lists the tables and their columns.
func (h *hermesSource) loadSchema(ctx context.Context) error {
	tables, err := h.f.Query(ctx, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return err
	}
	for _, t := range tables {
		name := hermesRow(t).str("name")
		cols, err := h.f.Query(ctx, "SELECT name FROM pragma_table_info(?)", name)
		if err != nil {
			return err
		}
		h.cols[name] = map[string]bool{}
		for _, c := range cols {
			h.cols[name][hermesRow(c).str("name")] = true
		}
	}
	return nil
}

func (h *hermesSource) has(table string) bool { return h.cols[table] != nil }

// hasCol reports whether the file's table has the column: older schema
// versions lack many, and a query naming one they lack fails.
func (h *hermesSource) hasCol(table, col string) bool { return h.cols[table][col] }

// query reads rows by name.
func (h *hermesSource) query(ctx context.Context, q string, args ...any) ([]hermesRow, error) {
	rows, err := h.f.Query(ctx, q, args...)
	out := make([]hermesRow, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out, err
}

// count runs a COUNT query (its one column named n).
func (h *hermesSource) count(ctx context.Context, q string, args ...any) (int64, error) {
	rows, err := h.query(ctx, q, args...)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	for _, v := range rows[0] {
		return hermesRow{"n": v}.int("n"), nil
	}
	return 0, nil
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
		COALESCE(SUM(`+h.colOr("messages", "active", "1")+`), 0) AS act,
		COALESCE(SUM(`+h.colOr("messages", "compacted", "0")+`), 0) AS cmp
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

// colOr is the column's name when the file's table has it, else the SQL
// literal standing for the value every row of a version without it had
// (messages.active came with v8: every older row is live).
func (h *hermesSource) colOr(table, col, literal string) string {
	if h.hasCol(table, col) {
		return col
	}
	return literal
}
