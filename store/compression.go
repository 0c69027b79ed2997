package store

import (
	"context"
	"fmt"
	"slices"

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
	// active rows up to it are replaced. Set Watermark or Held, not both.
	Watermark int64
	// Held is the ids of the active rows the compressor read and replaces
	// (what its summary covers); when set, only they become compacted and
	// every other active row is carried after Messages, in id order: a
	// row appended while it summarised, and a row it never saw below its
	// newest — on PostgreSQL an id is taken before its transaction
	// commits, so a row with a smaller id can become visible after a
	// larger one was read. A held row that is no longer active (another
	// writer rewound, replaced or compacted it) refuses the compaction
	// with ErrConflict, nothing written.
	Held []int64
	// ExpectedActiveIDs, when set, is the session's whole active id list
	// as the compressor read it: any change since (an append, a rewind, a
	// replace) refuses the compaction with ErrConflict, nothing written —
	// for a compressor that would rather start again than carry a row
	// its summary did not see.
	ExpectedActiveIDs []int64
	// TurnHolder, when set, refuses the compaction (ErrLeaseHeld, nothing
	// written) while anyone but TurnHolder holds a live turn lease on the
	// conversation: another writer is mid-turn. The caller holding the
	// turn itself passes its own holder. Unset, turns go on during a
	// compaction and what they append is carried (sessiondb's rule: the
	// compression lock is the only lock a compaction takes).
	TurnHolder string
	// Messages replace them: a summary (Summary set) and any turns kept
	// verbatim. Idempotency keys and platform message ids are not
	// allowed here: a kept turn's original keeps its own. A kept turn
	// copied with Message.AsNew keeps its UID and its calls' UIDs; a
	// tool result kept here must not also be carried (at most one live
	// result per tool call: *DuplicateToolResultError, nothing written).
	Messages []NewMessage
}

// CompactResult says what CompactSession did.
type CompactResult struct {
	Compacted int64   // active rows that became compacted
	IDs       []int64 // the new rows, in order
	Carried   []int64 // copies of the active rows above the watermark, after the new rows (for CompactKeepingLast: the kept tail, then rows appended meanwhile)
}

// CompactSession replaces the session's active rows up to c.Watermark (or
// exactly c.Held) by c.Messages, in one transaction that first verifies
// c.Holder's compression lock and the guards c sets (Held, ExpectedActiveIDs,
// TurnHolder). The replaced rows become compacted: hidden from the live
// conversation, still shown in history and found by search. Every other
// active row — appended after the watermark, or not held — is copied
// after the new rows (its original is retired, and an idempotency key or
// platform message id moves to its copy; parts, model, metadata and UIDs
// are copied whole), so the conversation stays in order and no turn is
// lost. A compaction that would leave two live results of one tool call
// is refused (*DuplicateToolResultError); duplicates the transcript
// already had are carried as they are. Counters are recomputed.
func (s *Store) CompactSession(ctx context.Context, sessionID string, c Compaction) (CompactResult, error) {
	const op = "compact session"
	prepared, err := checkCompression(sessionID, c.Holder, c.Watermark, c.Messages, s.MaxMessageBytes())
	if err == nil {
		err = c.checkGuards()
	}
	if err != nil {
		return CompactResult{}, opErr(op, sessionID, err)
	}
	var res CompactResult
	err = s.write(ctx, op, sessionID, s.opts.TranscriptPatience, func(ctx context.Context, tx driver.Executor) (err error) {
		res = CompactResult{}
		if err := openForCompression(ctx, tx, sessionID, c.Holder); err != nil {
			return err
		}
		if err := guardTurn(ctx, tx, sessionID, c.TurnHolder); err != nil {
			return err
		}
		watermark, tail, err := compactionTail(ctx, tx, sessionID, c.Watermark, c.Held, c.ExpectedActiveIDs)
		if err != nil {
			return err
		}
		before, _, err := liveResultCounts(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		// The tail's originals go first: what is left active up to the
		// watermark is exactly what the compressor replaces.
		for _, m := range tail {
			if err := tx.MessageRetire(ctx, m.ID); err != nil {
				return err
			}
		}
		if res.Compacted, err = tx.MessageCompactUpTo(ctx, driver.MessageCompactUpToParams{
			SessionID: sessionID, Watermark: watermark}); err != nil {
			return err
		}
		var inserted int64
		if res.IDs, inserted, err = insertMessages(ctx, tx, sessionID, prepared); err != nil {
			return err
		}
		for _, m := range tail {
			id, err := tx.MessageCopy(ctx, driver.MessageCopyParams{SessionID: sessionID,
				IdempotencyKey: m.IdempotencyKey, PlatformMessageID: m.PlatformMessageID, SourceID: m.ID})
			if err != nil {
				return err
			}
			res.Carried = append(res.Carried, id)
		}
		if err := oneLiveResultPerCall(ctx, tx, sessionID, before); err != nil {
			return err
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

// checkGuards checks the guards' shape before any transaction.
func (c *Compaction) checkGuards() error {
	if len(c.Held) > 0 && c.Watermark != 0 {
		return invalid("set Watermark or Held, not both")
	}
	for _, id := range c.Held {
		if id <= 0 {
			return invalid("held message id %d is not positive", id)
		}
	}
	if c.TurnHolder != "" {
		return checkLease(c.TurnHolder, 0)
	}
	return nil
}

// guardTurn refuses (ErrLeaseHeld) while anyone but holder holds a live
// turn lease on sessionID's conversation; holder "" guards nothing.
func guardTurn(ctx context.Context, tx driver.Executor, sessionID, holder string) error {
	if holder == "" {
		return nil
	}
	root, err := conversationRoot(ctx, tx, sessionID)
	if err != nil {
		return err
	}
	if err := turnLeases.blocks(ctx, tx, root, holder); err != nil {
		return fmt.Errorf("turn lease: %w", err)
	}
	return nil
}

// compactionTail reads, inside a compaction's transaction, the active rows
// it carries (copies after its new rows) and the watermark up to which the
// rest is replaced: with held ids, every active row not held, and the
// newest held id (ErrConflict when a held row is no longer active);
// else the rows above watermark. expected, when set, must be the whole
// active id list (ErrConflict otherwise).
func compactionTail(ctx context.Context, tx driver.Executor, sessionID string, watermark int64, held, expected []int64) (int64, []driver.Message, error) {
	if len(held) == 0 && expected == nil {
		tail, err := tx.MessageActiveAbove(ctx, driver.MessageActiveAboveParams{SessionID: sessionID, Watermark: watermark})
		return watermark, tail, err
	}
	active, err := tx.MessageActiveAbove(ctx, driver.MessageActiveAboveParams{SessionID: sessionID, Watermark: 0})
	if err != nil {
		return 0, nil, err
	}
	if expected != nil {
		ids := make([]int64, len(active))
		for i := range active {
			ids[i] = active[i].ID
		}
		if !slices.Equal(ids, expected) {
			return 0, nil, fmt.Errorf("%w: the active messages changed since the compressor read them", ErrConflict)
		}
	}
	if len(held) == 0 {
		return watermark, slices.DeleteFunc(active, func(m driver.Message) bool { return m.ID <= watermark }), nil
	}
	isHeld := make(map[int64]bool, len(held))
	for _, id := range held {
		isHeld[id] = true
	}
	var tail []driver.Message
	for _, m := range active {
		if isHeld[m.ID] {
			delete(isHeld, m.ID)
			watermark = max(watermark, m.ID)
		} else {
			tail = append(tail, m)
		}
	}
	for _, id := range held {
		if isHeld[id] {
			return 0, nil, fmt.Errorf("%w: held message %d is no longer active (another writer rewound, replaced or compacted it)", ErrConflict, id)
		}
	}
	return watermark, tail, nil
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
