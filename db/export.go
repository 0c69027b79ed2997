package db

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"

	"github.com/sessiondb/sessiondb/db/gen"
)

// exportPage bounds the rows an export holds in memory at once.
const exportPage = 500

// ExportOptions choose what Export writes.
type ExportOptions struct {
	// SessionID exports only this session ("" exports every session).
	SessionID string
	// Lineage, with SessionID, exports the session's whole compression
	// lineage, root to tip.
	Lineage bool
	// OnProgress, when set, is called after each session with the running
	// counts.
	OnProgress func(sessions, messages int64)
}

// ExportResult counts what Export wrote.
type ExportResult struct {
	Sessions int64
	Messages int64
}

// Export writes sessions with their messages and usage to w as JSON Lines
// (the format is described in exportformat.go: a versioned header, then
// each session followed by its rows). It reads one consistent snapshot and
// streams: memory stays bounded by a page of rows whatever the store's
// size. Exporting into an empty store with Import and exporting again
// gives the same bytes.
func (s *Store) Export(ctx context.Context, w io.Writer, o ExportOptions) (ExportResult, error) {
	const op = "export"
	if o.Lineage && o.SessionID == "" {
		return ExportResult{}, opErr(op, "", invalid("Lineage needs a SessionID"))
	}
	var res ExportResult
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	err := s.snapshot(ctx, op, o.SessionID, func(q gen.DBTX) error {
		res = ExportResult{}
		if err := enc.Encode(headerRecord{Type: "header", Format: exportFormat, Version: exportVersion}); err != nil {
			return err
		}
		one := func(r gen.Session) error {
			n, err := exportSession(ctx, q, enc, r)
			res.Sessions++
			res.Messages += n
			if err == nil && o.OnProgress != nil {
				o.OnProgress(res.Sessions, res.Messages)
			}
			return err
		}
		if o.SessionID != "" {
			ids := []string{o.SessionID}
			if o.Lineage {
				var err error
				if ids, err = lineageIDs(ctx, q, o.SessionID); err != nil {
					return err
				}
			}
			for _, id := range ids {
				r, err := queries.SessionGet(ctx, q, id)
				if err != nil {
					return err
				}
				if err := one(r); err != nil {
					return err
				}
			}
			return nil
		}
		// From the very first start time: import accepts any int64, and a
		// session before the cursor's floor would silently be left out.
		cursor := gen.SessionExportPageParams{AfterStarted: math.MinInt64, RowLimit: exportPage}
		for {
			rows, err := queries.SessionExportPage(ctx, q, cursor)
			if err != nil {
				return err
			}
			for _, r := range rows {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := one(r); err != nil {
					return err
				}
			}
			if len(rows) < exportPage {
				return nil
			}
			last := rows[len(rows)-1]
			cursor.AfterStarted, cursor.AfterID = last.StartedAt, last.ID
		}
	})
	if err != nil {
		return res, err
	}
	return res, opErr(op, "", bw.Flush())
}

// exportSession writes one session's lines and returns its message count.
func exportSession(ctx context.Context, q gen.DBTX, enc *json.Encoder, r gen.Session) (int64, error) {
	if err := enc.Encode(sessionRecordFromRow(r)); err != nil {
		return 0, err
	}
	seq, after := int64(0), int64(0)
	for {
		rows, err := queries.MessageExportPage(ctx, q, gen.MessageExportPageParams{SessionID: r.ID, AfterID: after, RowLimit: exportPage})
		if err != nil {
			return seq, err
		}
		for _, m := range rows {
			seq++
			rec := messageRecord{Type: "message", SessionID: r.ID, Seq: seq, Role: m.Role, Content: m.Content,
				ToolName: str(m.ToolName), ToolCallID: str(m.ToolCallID), Reasoning: str(m.Reasoning),
				FinishReason: str(m.FinishReason), TokenCount: m.TokenCount, State: m.State,
				Summary: m.IsSummary != 0, IdempotencyKey: str(m.IdempotencyKey), CreatedAt: m.CreatedAt}
			if m.ToolCallsJson != nil {
				rec.ToolCalls = json.RawMessage(*m.ToolCallsJson)
			}
			if m.OriginID != nil {
				// An origin deleted since (its session pruned) is simply not named.
				if o, err := queries.MessageSeq(ctx, q, *m.OriginID); err == nil {
					rec.Origin = &messageRef{SessionID: o.SessionID, Seq: o.Seq}
				}
			}
			if err := enc.Encode(rec); err != nil {
				return seq, err
			}
			after = m.ID
		}
		if len(rows) < exportPage {
			break
		}
	}
	usage, err := queries.ModelUsageBySession(ctx, q, r.ID)
	if err != nil {
		return seq, err
	}
	for _, u := range usage {
		if err := enc.Encode(usageRecord{Type: "usage", SessionID: r.ID, Model: u.Model, Task: u.Task,
			usageFields: usageFields{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
				ReasoningTokens: u.ReasoningTokens, APICalls: u.ApiCallCount, EstimatedCostUSD: u.EstimatedCostUsd,
				ActualCostUSD: u.ActualCostUsd},
			FirstSeenAt: u.FirstSeenAt, LastSeenAt: u.LastSeenAt}); err != nil {
			return seq, err
		}
	}
	return seq, nil
}
