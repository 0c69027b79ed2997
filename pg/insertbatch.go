package pg

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

var _ driver.MessageInsertBatcher = pgExecutor{}

// Bounds of one MessageInsertMany statement: its rows, and the text its
// JSON carries (a row over it goes alone). The JSON is one parameter the
// server holds whole while it inserts; a few MB keep that flat whatever
// the append's size, and the statement's fixed costs are spread thin
// long before either bound.
const (
	insertManyRows  = 1000
	insertManyBytes = 4 << 20
)

// insertRow is MessageInsert's parameters as MessageInsertMany's JSON
// objects (pg/queries/appendmany.sql): the same columns, under their own
// names.
type insertRow struct {
	SessionID         string  `json:"session_id"`
	Role              string  `json:"role"`
	Content           string  `json:"content"`
	ToolName          *string `json:"tool_name"`
	ToolCallID        *string `json:"tool_call_id"`
	ToolCallsJson     *string `json:"tool_calls_json"`
	ToolText          *string `json:"tool_text"`
	Reasoning         *string `json:"reasoning"`
	ReasoningDetails  *string `json:"reasoning_details"`
	FinishReason      *string `json:"finish_reason"`
	TokenCount        *int64  `json:"token_count"`
	IsSummary         int64   `json:"is_summary"`
	IdempotencyKey    *string `json:"idempotency_key"`
	CreatedAt         int64   `json:"created_at"`
	PartsJson         *string `json:"parts_json"`
	Model             *string `json:"model"`
	PlatformMessageID *string `json:"platform_message_id"`
	MetadataJson      *string `json:"metadata_json"`
	Observed          int64   `json:"observed"`
	EffectDisposition *string `json:"effect_disposition"`
	ReasoningContent  *string `json:"reasoning_content"`
	DisplayKind       *string `json:"display_kind"`
	Uid               *string `json:"uid"`
	CallUid           *string `json:"call_uid"`
	ToolEndedAt       *int64  `json:"tool_ended_at"`
	ToolDurationMs    *int64  `json:"tool_duration_ms"`
}

// MessageInsertBatch inserts an append's new rows with one
// MessageInsertMany statement for up to insertManyRows of them
// (driver.MessageInsertBatcher): a multi-row INSERT costs the server
// about half of what one statement a row does (docs/PERFORMANCE.md,
// "PostgreSQL: an append's rows in one statement"), and a pipelined
// append sends it in one round trip. A row whose text JSON would not
// carry exactly — a NUL byte (JSON's \u0000, which the server refuses as
// text with an error of its own) or bytes that are not UTF-8 (which
// encoding/json replaces) — goes alone through MessageInsert, so its
// refusal is MessageInsert's own; so does a row over insertManyBytes.
func (e pgExecutor) MessageInsertBatch(ctx context.Context, rows []driver.MessageInsertParams) ([]int64, error) {
	ids := make([]int64, 0, len(rows))
	for len(rows) > 0 {
		n, size := 0, 0
		for n < len(rows) && n < insertManyRows && jsonCarries(&rows[n]) {
			if size += textBytes(&rows[n]); n > 0 && size > insertManyBytes {
				break
			}
			n++
		}
		if n <= 1 { // alone: too large to share a statement, JSON cannot carry it, or the last
			id, err := e.MessageInsert(ctx, rows[0])
			if err != nil {
				return nil, err
			}
			ids, rows = append(ids, id), rows[1:]
			continue
		}
		got, err := e.insertMany(ctx, rows[:n])
		if err != nil {
			return nil, err
		}
		ids, rows = append(ids, got...), rows[n:]
	}
	return ids, nil
}

func (e pgExecutor) insertMany(ctx context.Context, rows []driver.MessageInsertParams) ([]int64, error) {
	if p, ok := e.db.(*pipeline); ok { // the round may share its statement (pipeshare.go)
		return p.insertRows(rows)
	}
	objs, err := rowObjects(rows)
	if err != nil {
		return nil, err
	}
	ids, err := e.q.MessageInsertMany(ctx, e.db, "["+objs+"]")
	if err != nil {
		return nil, mapError(err)
	}
	if len(ids) != len(rows) {
		return nil, fmt.Errorf("pg: %d rows inserted, %d ids returned", len(rows), len(ids))
	}
	return ids, nil
}

// rowObjects is rows as MessageInsertMany's JSON objects, comma-separated:
// the inside of its array, which a shared statement joins with other
// appends' (pipeshare.go).
func rowObjects(rows []driver.MessageInsertParams) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(insertRow(rows[i])); err != nil {
			return "", fmt.Errorf("pg: encoding an append's rows: %w", err)
		}
	}
	return b.String(), nil
}

// textBytes is the text of a row's columns, about what its JSON takes.
func textBytes(p *driver.MessageInsertParams) int {
	n := len(p.Content)
	for _, s := range textColumns(p) {
		if s != nil {
			n += len(*s)
		}
	}
	return n
}

// jsonCarries reports whether every text of p reaches the server through
// JSON as it would as a parameter (rules.JSONExact).
func jsonCarries(p *driver.MessageInsertParams) bool {
	if !rules.JSONExact(p.SessionID) || !rules.JSONExact(p.Role) || !rules.JSONExact(p.Content) {
		return false
	}
	for _, s := range textColumns(p) {
		if s != nil && !rules.JSONExact(*s) {
			return false
		}
	}
	return true
}

// textColumns are p's optional text columns.
func textColumns(p *driver.MessageInsertParams) [17]*string {
	return [17]*string{p.ToolName, p.ToolCallID, p.ToolCallsJson, p.ToolText, p.Reasoning, p.ReasoningDetails,
		p.FinishReason, p.IdempotencyKey, p.PartsJson, p.Model, p.PlatformMessageID, p.MetadataJson,
		p.EffectDisposition, p.ReasoningContent, p.DisplayKind, p.Uid, p.CallUid}
}
