package store

import (
	"context"
	"errors"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/internal/searchtext"
	"github.com/sessiondb/sessiondb/store/driver"
)

// writeForeignMessages writes a foreign batch's messages into session id
// inside tx. A message already imported (its key is there) only takes the
// source's new state; a new message goes in, keeping in its metadata a
// platform id an earlier row of the session holds (see WriteForeignBatch).
// The batch's keys and platform ids are looked up in one statement each
// (foreignLookup), and its new rows go in as an import's do (importBatch:
// COPY on PostgreSQL), not a lookup or two and an insert a message: the
// Hermes import on PostgreSQL was bound by those round trips
// (docs/PERFORMANCE.md, "Bulk load").
func writeForeignMessages(ctx context.Context, tx driver.Executor, id string, msgs []ForeignMessage, res *ForeignBatchResult) error {
	look, err := lookUpForeign(ctx, tx, id, msgs)
	if err != nil {
		return err
	}
	var rows importBatch
	written := map[string]bool{} // keys of this batch's new rows
	for _, m := range msgs {
		key := rules.Str(m.IdempotencyKey)
		if m.IdempotencyKey != nil && written[key] {
			// The source repeats a key within the batch: the first row is
			// the message, this one only its state, as for one imported
			// before — read back once the rows are in.
			if err := rows.flush(ctx, tx); err != nil {
				return err
			}
			look.alone[key] = true
		}
		st, found, err := look.state(ctx, m.IdempotencyKey)
		if err != nil {
			return err
		}
		if found {
			if st.State != m.State {
				if err := tx.MessageSetState(ctx, driver.MessageSetStateParams{ID: st.ID, State: m.State}); err != nil {
					return err
				}
				look.restated(key, m.State)
				res.Restated++
			}
			continue
		}
		p := m
		p.SessionID = id
		if p.PlatformMessageID != nil {
			held, err := look.platformIDHeld(ctx, *p.PlatformMessageID)
			if err != nil {
				return err
			}
			if held { // an earlier row holds it: this one keeps it in its metadata
				p.MetadataJson, p.PlatformMessageID = rules.Ptr(duplicatePlatformIDMetadata(*p.PlatformMessageID)), nil
			} else {
				look.pids[*p.PlatformMessageID] = true // this row holds it now
			}
		}
		if p.Uid == nil { // the row's own: an import resumed or run again gives it the same
			p.Uid = rules.Ptr(uidOf(id, key))
		}
		if err := rows.add(ctx, tx, foreignImportParams(p)); err != nil {
			return err
		}
		if m.IdempotencyKey != nil {
			written[key] = true
		}
		res.Messages++
	}
	return rows.flush(ctx, tx)
}

// foreignImportParams is a foreign message as an import writes it: the
// columns a foreign source has, the others unset, as ForeignMessageInsert
// leaves them.
func foreignImportParams(p ForeignMessage) driver.MessageImportParams {
	return driver.MessageImportParams{
		SessionID: p.SessionID, Role: p.Role, Content: p.Content, ToolName: p.ToolName,
		ToolCallID: p.ToolCallID, ToolCallsJson: p.ToolCallsJson, ToolText: p.ToolText,
		Reasoning: p.Reasoning, ReasoningDetails: p.ReasoningDetails, FinishReason: p.FinishReason,
		TokenCount: p.TokenCount, State: p.State, IsSummary: p.IsSummary, IdempotencyKey: p.IdempotencyKey,
		PlatformMessageID: p.PlatformMessageID, CreatedAt: p.CreatedAt, MetadataJson: p.MetadataJson,
		Observed: p.Observed, EffectDisposition: p.EffectDisposition, ReasoningContent: p.ReasoningContent,
		Uid: p.Uid,
	}
}

// foreignLookup answers, for one session, whether a key's message is
// there (and its state) and whether a platform id is held: from what one
// statement each read for the batch, or by a statement of its own for a
// value that statement's JSON cannot carry exactly (not UTF-8, a NUL byte)
// and for a key the batch itself wrote.
type foreignLookup struct {
	tx     driver.Executor
	id     string
	states map[string]driver.MessageStatesByKeysRow
	pids   map[string]bool
	alone  map[string]bool // keys whose rows the batch wrote since: read by a statement each
}

func lookUpForeign(ctx context.Context, tx driver.Executor, id string, msgs []ForeignMessage) (*foreignLookup, error) {
	l := &foreignLookup{tx: tx, id: id, states: map[string]driver.MessageStatesByKeysRow{},
		pids: map[string]bool{}, alone: map[string]bool{}}
	var keys, pids []string
	for _, m := range msgs {
		if k := m.IdempotencyKey; k != nil && rules.JSONExact(*k) {
			keys = append(keys, *k)
		}
		if p := m.PlatformMessageID; p != nil && rules.JSONExact(*p) {
			pids = append(pids, *p)
		}
	}
	if len(keys) > 0 {
		rows, err := tx.MessageStatesByKeys(ctx, driver.MessageStatesByKeysParams{SessionID: id, Keys: searchtext.JSONStrings(keys)})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			l.states[rules.Str(r.IdempotencyKey)] = r
		}
	}
	if len(pids) > 0 {
		held, err := tx.MessagePlatformIDsHeld(ctx, driver.MessagePlatformIDsHeldParams{SessionID: id, Pids: searchtext.JSONStrings(pids)})
		if err != nil {
			return nil, err
		}
		for _, p := range held {
			l.pids[rules.Str(p)] = true
		}
	}
	return l, nil
}

// state is the id and state of the session's message holding key.
func (l *foreignLookup) state(ctx context.Context, key *string) (driver.MessageStatesByKeysRow, bool, error) {
	if key == nil {
		return driver.MessageStatesByKeysRow{}, false, nil
	}
	if rules.JSONExact(*key) && !l.alone[*key] {
		st, ok := l.states[*key]
		return st, ok, nil
	}
	st, err := l.tx.MessageStateByKey(ctx, driver.MessageStateByKeyParams{SessionID: l.id, IdempotencyKey: key})
	if errors.Is(err, ErrNotFound) {
		return driver.MessageStatesByKeysRow{}, false, nil
	}
	return driver.MessageStatesByKeysRow{IdempotencyKey: key, ID: st.ID, State: st.State}, err == nil, err
}

// restated records that the batch set key's message to state.
func (l *foreignLookup) restated(key, state string) {
	if st, ok := l.states[key]; ok {
		st.State = state
		l.states[key] = st
	}
}

// platformIDHeld reports whether a message of the session, or a new row of
// this batch, holds pid.
func (l *foreignLookup) platformIDHeld(ctx context.Context, pid string) (bool, error) {
	if l.pids[pid] || rules.JSONExact(pid) {
		return l.pids[pid], nil
	}
	_, err := l.tx.MessageIDByPlatformID(ctx, driver.MessageIDByPlatformIDParams{SessionID: l.id, PlatformMessageID: &pid})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
