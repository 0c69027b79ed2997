package store

import (
	"context"
	"fmt"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// compressionEndReason stamps a session whose conversation continues in a
// compression child.
const compressionEndReason = "compression"

// ActiveWatermark returns the id of the session's newest active message (0
// when it has none). A compressor reads it before it summarises: rows
// appended while it works lie above it and are carried over, never lost.
func (s *Store) ActiveWatermark(ctx context.Context, sessionID string) (int64, error) {
	var w int64
	err := s.read(ctx, "get active watermark", sessionID, func(q driver.Executor) (err error) {
		if err := sessionMustExist(ctx, q, sessionID); err != nil {
			return err
		}
		w, err = q.MessageActiveWatermark(ctx, sessionID)
		return err
	})
	return w, err
}

// Compaction is a compressor's result for CompactSession.
type Compaction struct {
	// Holder is the compression lock holder; the lock is verified inside
	// the transaction (ErrLeaseLost when it is not held).
	Holder string
	// Watermark is what ActiveWatermark returned before summarising: the
	// active rows up to it are replaced.
	Watermark int64
	// Messages replace them: a summary (Summary set) and any turns kept
	// verbatim. Idempotency keys and platform message ids are not
	// allowed here: a kept turn's original keeps its own.
	Messages []NewMessage
}

// CompactResult says what CompactSession did.
type CompactResult struct {
	Compacted int64   // active rows that became compacted
	IDs       []int64 // the new rows, in order
	Carried   []int64 // copies of the active rows above the watermark, after the new rows (for CompactKeepingLast: the kept tail, then rows appended meanwhile)
}

// CompactSession replaces the session's active rows up to c.Watermark by
// c.Messages, in one transaction that first verifies c.Holder's compression
// lock. The replaced rows become compacted: hidden from the live
// conversation, still shown in history and found by search. Rows appended
// after the watermark are copied after the new rows (their originals are
// retired, and an idempotency key or platform message id moves to its
// copy; parts, model and metadata are copied whole), so the conversation
// stays in order and no turn is lost. Counters are recomputed.
func (s *Store) CompactSession(ctx context.Context, sessionID string, c Compaction) (CompactResult, error) {
	const op = "compact session"
	prepared, err := checkCompression(sessionID, c.Holder, c.Watermark, c.Messages, s.MaxMessageBytes())
	if err != nil {
		return CompactResult{}, opErr(op, sessionID, err)
	}
	var res CompactResult
	err = s.write(ctx, op, sessionID, s.opts.TranscriptPatience, func(ctx context.Context, tx driver.Executor) (err error) {
		res = CompactResult{}
		if err := openForCompression(ctx, tx, sessionID, c.Holder); err != nil {
			return err
		}
		tail, err := tx.MessageActiveAbove(ctx, driver.MessageActiveAboveParams{SessionID: sessionID, Watermark: c.Watermark})
		if err != nil {
			return err
		}
		if res.Compacted, err = tx.MessageCompactUpTo(ctx, driver.MessageCompactUpToParams{
			SessionID: sessionID, Watermark: c.Watermark}); err != nil {
			return err
		}
		var inserted int64
		if res.IDs, inserted, err = insertMessages(ctx, tx, sessionID, prepared); err != nil {
			return err
		}
		for _, m := range tail {
			if err := tx.MessageRetire(ctx, m.ID); err != nil {
				return err
			}
			id, err := tx.MessageCopy(ctx, driver.MessageCopyParams{SessionID: sessionID,
				IdempotencyKey: m.IdempotencyKey, PlatformMessageID: m.PlatformMessageID, SourceID: m.ID})
			if err != nil {
				return err
			}
			res.Carried = append(res.Carried, id)
		}
		if inserted == 0 && (res.Compacted > 0 || len(tail) > 0) { // else the insert's count moved it
			if err := tx.SessionBumpDisplayRevision(ctx, sessionID); err != nil {
				return err
			}
		}
		return tx.SessionRecount(ctx, sessionID)
	})
	return res, err
}

// Continuation is a compressor's result for PublishCompressionChild.
type Continuation struct {
	// Holder is the compression lock holder on the parent, verified inside
	// the transaction (ErrLeaseLost when it is not held).
	Holder string
	// Watermark is the parent's ActiveWatermark read before summarising:
	// the parent's active rows above it are copied into the child after
	// Messages.
	Watermark int64
	// Child describes the new session. Its ID may be empty (one is made);
	// ParentID and Kind are set by the call; Source, UserID, Model and Cwd
	// default to the parent's.
	Child NewSession
	// Messages are the handoff the child starts with (a summary and kept
	// turns). Idempotency keys are not allowed here.
	Messages []NewMessage
}

// PublishCompressionChild continues the parent's conversation in a new
// child session, in one transaction that first verifies the caller's
// compression lock on the parent: the child is created (kind compression,
// the parent's pin/archive/hidden flags, and the parent's title numbered
// as the conversation's next session: "Fix the build #2", "#3" — the
// parent keeps its own), the handoff messages are inserted, the parent's rows above the
// watermark are copied after them, and the parent is ended with reason
// "compression" — from then on appends to it fail with ErrSessionClosed.
// A parent ended explicitly cannot be continued (ErrSessionClosed); an
// automatic end stamp (a reaper, a disconnect) is replaced.
func (s *Store) PublishCompressionChild(ctx context.Context, parentID string, c Continuation) (Session, error) {
	const op = "publish compression child"
	prepared, err := checkCompression(parentID, c.Holder, c.Watermark, c.Messages, s.MaxMessageBytes())
	if err != nil {
		return Session{}, opErr(op, parentID, err)
	}
	child := c.Child
	child.ParentID, child.Kind = parentID, ChildCompression
	if err := child.normalize(); err != nil {
		return Session{}, opErr(op, parentID, err)
	}
	if child.Title != "" {
		return Session{}, opErr(op, parentID, invalid("a compression child takes its parent's title, numbered; set it afterwards"))
	}
	var out Session
	err = s.write(ctx, op, parentID, s.opts.TranscriptPatience, func(ctx context.Context, tx driver.Executor) error {
		if err := openForCompression(ctx, tx, parentID, c.Holder); err != nil {
			return err
		}
		parent, err := tx.SessionGet(ctx, parentID)
		if err != nil {
			return err
		}
		n := child
		n.Source = orDefault(c.Child.Source, parent.Source)
		n.UserID, n.Model, n.Cwd = orDefault(n.UserID, rules.Str(parent.UserID)), orDefault(n.Model, rules.Str(parent.Model)), orDefault(n.Cwd, rules.Str(parent.Cwd))
		if n.ModelConfig == "" {
			n.ModelConfig = rules.Str(parent.ModelConfigJson)
		}
		if n.SystemPrompt == "" {
			n.SystemPrompt = rules.Str(parent.SystemPrompt)
		}
		at := now()
		rows, err := tx.SessionInsert(ctx, insertSessionParams(n, at))
		if err != nil {
			return err
		}
		if rows == 0 {
			return fmt.Errorf("child session %q: %w", n.ID, ErrExists)
		}
		if err := tx.SessionCopyFlags(ctx, driver.SessionCopyFlagsParams{ParentID: parentID, ID: n.ID}); err != nil {
			return err
		}
		if parent.Title != nil { // the child is the conversation's next numbered session
			title, err := continuationTitle(ctx, tx, rules.Ptr(n.UserID), *parent.Title)
			if err != nil {
				return err
			}
			if _, err := tx.SessionTitleSet(ctx, driver.SessionTitleSetParams{ID: n.ID,
				Title: &title, TitleRank: parent.TitleRank}); err != nil {
				return err
			}
		}
		inserted, err := insertMessagesCount(ctx, tx, n.ID, prepared)
		if err != nil {
			return err
		}
		tail, err := tx.MessageActiveAbove(ctx, driver.MessageActiveAboveParams{SessionID: parentID, Watermark: c.Watermark})
		if err != nil {
			return err
		}
		for _, m := range tail {
			if _, err := tx.MessageCopy(ctx, driver.MessageCopyParams{SessionID: n.ID,
				IdempotencyKey: m.IdempotencyKey, PlatformMessageID: m.PlatformMessageID, SourceID: m.ID}); err != nil {
				return err
			}
		}
		if inserted == 0 && len(tail) > 0 {
			if err := tx.SessionBumpDisplayRevision(ctx, n.ID); err != nil {
				return err
			}
		}
		if err := tx.SessionRecount(ctx, n.ID); err != nil {
			return err
		}
		// The child's last activity folds in its ancestors', and a
		// continuation is new activity: it takes back the sweep's
		// archive of the conversation (SessionCopyFlags left the child
		// out of it), never a person's.
		if err := recomputeConversationActivity(ctx, tx, n.ID); err != nil {
			return err
		}
		if err := reactivateLineage(ctx, tx, parentID); err != nil {
			return err
		}
		ended, err := tx.SessionEndForCompression(ctx, driver.SessionEndForCompressionParams{ID: parentID, EndedAt: &at})
		if err != nil {
			return err
		}
		if ended == 0 {
			return fmt.Errorf("%w: ended (%s) before it could be continued", ErrSessionClosed, rules.Str(parent.EndReason))
		}
		row, err := tx.SessionGet(ctx, n.ID)
		out = sessionFromRow(row)
		return err
	})
	return out, err
}

// checkCompression checks a compressor's input before any transaction.
func checkCompression(sessionID, holder string, watermark int64, ms []NewMessage, maxBytes int64) ([]preparedMessage, error) {
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, 0)); err != nil {
		return nil, err
	}
	if watermark < 0 {
		return nil, invalid("negative watermark")
	}
	// A compressor's messages are new rows standing for turns already
	// stored: a key or platform id on one would answer for the turn it
	// stands for (a re-delivery of it) instead of inserting it, or claim
	// a carried copy's id.
	for i, m := range ms {
		if m.IdempotencyKey != "" {
			return nil, invalid("message %d: compression messages take no idempotency key", i)
		}
		if m.PlatformMessageID != "" {
			return nil, invalid("message %d: compression messages take no platform message id (the turns they carry keep theirs)", i)
		}
	}
	return prepareMessages(sessionID, ms, maxBytes)
}

// openForCompression verifies, inside the transaction, that the session
// exists, is not already continued elsewhere, and that holder holds its
// compression lock.
func openForCompression(ctx context.Context, tx driver.Executor, sessionID, holder string) error {
	reason, err := tx.SessionEndReason(ctx, sessionID)
	if err != nil {
		return err
	}
	if rules.Str(reason) == compressionEndReason {
		return continuedError(ctx, tx, sessionID)
	}
	return compressionLocks.mustHold(ctx, tx, sessionID, holder)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// insertMessagesCount is insertMessages for a caller that needs only how
// many rows it inserted.
func insertMessagesCount(ctx context.Context, tx driver.Executor, sessionID string, ms []preparedMessage) (int64, error) {
	_, n, err := insertMessages(ctx, tx, sessionID, ms)
	return n, err
}
