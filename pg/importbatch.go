package pg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store/driver"
)

var _ driver.MessageImportBatcher = pgExecutor{}

// importColumns are MessageImport's columns (pg/queries/export.sql), in
// the order messageImportRow gives their values.
var importColumns = []string{
	"session_id", "role", "content", "tool_name", "tool_call_id", "tool_calls_json", "tool_text", "reasoning",
	"reasoning_details", "finish_reason", "token_count", "state", "is_summary", "idempotency_key",
	"platform_message_id", "created_at", "origin_id", "parts_json", "model", "metadata_json",
	"observed", "effect_disposition", "reasoning_content", "display_kind", "uid", "call_uid", "tool_ended_at", "tool_duration_ms",
}

func messageImportRow(p driver.MessageImportParams) []any {
	return []any{
		p.SessionID, p.Role, p.Content, p.ToolName, p.ToolCallID, p.ToolCallsJson, p.ToolText, p.Reasoning,
		p.ReasoningDetails, p.FinishReason, p.TokenCount, p.State, p.IsSummary, p.IdempotencyKey,
		p.PlatformMessageID, p.CreatedAt, p.OriginID, p.PartsJson, p.Model, p.MetadataJson,
		p.Observed, p.EffectDisposition, p.ReasoningContent, p.DisplayKind, p.Uid, p.CallUid, p.ToolEndedAt, p.ToolDurationMs,
	}
}

// copier is a connection or transaction that speaks the COPY protocol
// (pgx.Tx does; an append's pipeline lane does not).
type copier interface {
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

// MessageImportBatch writes an import's messages with COPY
// (driver.MessageImportBatcher): one exchange instead of a statement and
// a round trip each, and the server's per-row work only — its indexes and
// the word vector (docs/PERFORMANCE.md, "Bulk load"). The table is named
// unqualified: the transaction's search_path is the store's schema, as
// for every query. Imports run in write transactions (a pgx.Tx), which
// can; an append's pipeline lane cannot, and never imports.
//
// Not SQL in a query file: COPY takes a table and its columns, which sqlc
// has no form for besides a generated method whose interface every
// connection of the engine would then have to offer.
func (e pgExecutor) MessageImportBatch(ctx context.Context, rows []driver.MessageImportParams) error {
	c, ok := e.db.(copier)
	if !ok {
		return fmt.Errorf("pg: a bulk import on a connection that cannot COPY (%T)", e.db)
	}
	if e.bulk != nil {
		e.bulk.copied.Add(int64(len(rows)))
	}
	_, err := c.CopyFrom(ctx, pgx.Identifier{"messages"}, importColumns,
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) { return messageImportRow(rows[i]), nil }))
	return mapError(err)
}
