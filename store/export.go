package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
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
	// Source exports only the sessions of this source ("" for any); it
	// does not go with SessionID. A child whose parent has another source
	// is exported as it is: an import links it when the parent is there.
	Source string
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
// (a versioned header, then each session followed by its rows). It
// streams: memory stays bounded by a page of rows whatever the store's
// size. Exporting into an empty store with Import and exporting again
// gives the same bytes.
//
// Each page of rows is read in a read transaction of its own, ended before
// the page is written to w: a slow w (a pipe, a network) or a large store
// never holds one snapshot for the whole export, which would keep the WAL
// from starting over for as long. Pages are keyset pages
// (sessions by start time and id, messages by id), so an export taken
// while writes go on has every session and message committed before it
// began, each once — none skipped, none twice — and rows committed
// meanwhile either in it or not, whole. A session's own line and usage are
// read at their page's moment: a message appended meanwhile may show in
// the export but not yet in its session's counters.
func (s *Store) Export(ctx context.Context, w io.Writer, o ExportOptions) (ExportResult, error) {
	const op = "export"
	if o.Lineage && o.SessionID == "" {
		return ExportResult{}, opErr(op, "", invalid("Lineage needs a SessionID"))
	}
	if o.Source != "" && o.SessionID != "" {
		return ExportResult{}, opErr(op, "", invalid("Source and SessionID do not go together"))
	}
	if err := rules.CheckLabel("source", o.Source); err != nil {
		return ExportResult{}, opErr(op, "", err)
	}
	var res ExportResult
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(headerRecord{Type: "header", Format: exportFormat, Version: exportVersion}); err != nil {
		return res, opErr(op, "", err)
	}
	one := func(r driver.Session) error {
		n, err := s.exportSession(ctx, enc, r)
		res.Sessions++
		res.Messages += n
		if err == nil && o.OnProgress != nil {
			o.OnProgress(res.Sessions, res.Messages)
		}
		return err
	}
	err := func() error {
		if o.SessionID != "" {
			var rows []driver.Session
			err := s.snapshot(ctx, op, o.SessionID, func(q driver.Executor) error {
				rows = rows[:0]
				ids := []string{o.SessionID}
				if o.Lineage {
					var err error
					if ids, err = lineageIDs(ctx, q, o.SessionID); err != nil {
						return err
					}
				}
				for _, id := range ids {
					r, err := q.SessionGet(ctx, id)
					if err != nil {
						return err
					}
					rows = append(rows, r)
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, r := range rows {
				if err := one(r); err != nil {
					return err
				}
			}
			return nil
		}
		for r, err := range s.sessionRows(ctx, op) {
			if err != nil {
				return err
			}
			if o.Source != "" && r.Source != o.Source {
				continue
			}
			if err := one(r); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		return res, opErr(op, o.SessionID, err)
	}
	return res, opErr(op, "", bw.Flush())
}

// exportSession writes one session's lines and returns its message count.
// Each page of messages, and the usage rows, are read in a snapshot of
// their own and written after it ends.
func (s *Store) exportSession(ctx context.Context, enc *json.Encoder, r driver.Session) (int64, error) {
	const op = "export"
	if err := enc.Encode(sessionRecordFromRow(r)); err != nil {
		return 0, err
	}
	seq, after := int64(0), int64(0)
	for {
		var recs []messageRecord
		err := s.snapshot(ctx, op, r.ID, func(q driver.Executor) error {
			recs = recs[:0]
			rows, err := q.MessageExportPage(ctx, driver.MessageExportPageParams{SessionID: r.ID, AfterID: after, RowLimit: exportPage})
			if err != nil {
				return err
			}
			for _, m := range rows {
				rec := messageRecord{Type: "message", SessionID: r.ID, Role: m.Role, Content: m.Content,
					ToolName: rules.Str(m.ToolName), ToolCallID: rules.Str(m.ToolCallID), Reasoning: rules.Str(m.Reasoning),
					FinishReason: rules.Str(m.FinishReason), TokenCount: m.TokenCount, State: m.State,
					Summary: m.IsSummary != 0, IdempotencyKey: rules.Str(m.IdempotencyKey), CreatedAt: m.CreatedAt,
					ReasoningDetails: rules.Str(m.ReasoningDetails), Model: rules.Str(m.Model),
					PlatformMessageID: rules.Str(m.PlatformMessageID), Metadata: rules.Str(m.MetadataJson),
					Observed: m.Observed != 0, EffectDisposition: rules.Str(m.EffectDisposition),
					ReasoningContent: rules.Str(m.ReasoningContent),
					DisplayKind:      rules.Str(m.DisplayKind), UID: rules.Str(m.Uid), CallUID: rules.Str(m.CallUid),
					ToolEndedAt: m.ToolEndedAt, ToolDurationMs: m.ToolDurationMs}
				position := m.ID // a row stored without UIDs exports the ones it reads with
				if m.OriginID != nil {
					position = *m.OriginID
				}
				if rec.UID == "" {
					rec.UID = legacyUID(position)
				}
				// Raw JSON goes out as it is stored: checked here, so a cell
				// another program broke fails the export with ErrCorrupt
				// naming the message, not the encoder's error.
				if m.ToolCallsJson != nil {
					if !json.Valid([]byte(*m.ToolCallsJson)) {
						return fmt.Errorf("message %d: %w", m.ID, badStoredJSON("tool calls", errors.New("does not parse")))
					}
					rec.ToolCalls = withCallUIDs(*m.ToolCallsJson, position)
				}
				if m.PartsJson != nil {
					if !json.Valid([]byte(*m.PartsJson)) {
						return fmt.Errorf("message %d: %w", m.ID, badStoredJSON("parts", errors.New("does not parse")))
					}
					rec.Parts = json.RawMessage(*m.PartsJson)
				}
				if m.OriginID != nil {
					// An origin deleted since (its session pruned) is simply not named.
					if o, err := q.MessageSeq(ctx, *m.OriginID); err == nil {
						rec.Origin = &messageRef{SessionID: o.SessionID, Seq: o.Seq}
					}
				}
				recs = append(recs, rec)
				after = m.ID
			}
			return nil
		})
		if err != nil {
			return seq, err
		}
		for i := range recs {
			seq++
			recs[i].Seq = seq
			if err := enc.Encode(recs[i]); err != nil {
				return seq, err
			}
		}
		if len(recs) < exportPage {
			break
		}
	}
	var usage []driver.ModelUsageBySessionRow
	err := s.snapshot(ctx, op, r.ID, func(q driver.Executor) (err error) {
		usage, err = q.ModelUsageBySession(ctx, r.ID)
		return err
	})
	if err != nil {
		return seq, err
	}
	for _, u := range usage {
		if err := enc.Encode(usageRecord{Type: "usage", SessionID: r.ID, Model: u.Model, Task: u.Task,
			usageFields: usageFields{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
				ReasoningTokens: u.ReasoningTokens, APICalls: u.ApiCallCount, EstimatedCostUSD: u.EstimatedCostUsd,
				ActualCostUSD: u.ActualCostUsd},
			FirstSeenAt: u.FirstSeenAt, LastSeenAt: u.LastSeenAt,
			BillingProvider: u.BillingProvider, BillingBaseURL: u.BillingBaseUrl, BillingMode: u.BillingMode,
			CostStatus: rules.Str(u.CostStatus), CostSource: rules.Str(u.CostSource)}); err != nil {
			return seq, err
		}
	}
	return seq, nil
}
