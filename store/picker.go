package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A session picker's view of a conversation's turn: is an agent working on
// it, how did its last turn end, does it wait for the user. It is read
// from the turn lease and from what the lease's holder reported
// (BeginTurn, FinishTurn, OpenAttention), never from message content, and
// never names the holder. It is the conversation's, keyed like the turn
// lease by the lineage root, so a compression continuation shows the same.

// Execution is whether a conversation's turn is running.
type Execution string

// The executions PickerStatus reports.
const (
	// ExecutionRunning: a live turn lease holds the conversation and its
	// turn has not finished.
	ExecutionRunning Execution = "running"
	// ExecutionIdle: the last turn finished (PickerStatus.LastResult says
	// how), and no newer turn was admitted since.
	ExecutionIdle Execution = "idle"
	// ExecutionUnknown: nothing says: no turn was ever observed, or the
	// last one's lease ended (released or expired) before it finished — a
	// crash reads so, never as idle or as the result of an older turn.
	ExecutionUnknown Execution = "unknown"
)

// TurnOutcome is how a turn ended.
type TurnOutcome string

// The outcomes FinishTurn records.
const (
	TurnComplete    TurnOutcome = "complete"
	TurnInterrupted TurnOutcome = "interrupted"
	TurnError       TurnOutcome = "error"
)

// Valid reports whether o is one of the three outcomes.
func (o TurnOutcome) Valid() bool {
	return o == TurnComplete || o == TurnInterrupted || o == TurnError
}

// TurnResult is how the conversation's last turn ended.
type TurnResult struct {
	TurnID  string
	Outcome TurnOutcome
	At      time.Time
}

// AttentionKind is what a running turn waits for from the user.
type AttentionKind string

// The attention kinds. AttentionNone and AttentionUnknown are read-only:
// OpenAttention takes any other label (these three, or the caller's own).
const (
	AttentionNone       AttentionKind = "none"
	AttentionUnknown    AttentionKind = "unknown" // a turn that reports nothing (a bare lease)
	AttentionQuestion   AttentionKind = "question"
	AttentionApproval   AttentionKind = "approval"
	AttentionValidation AttentionKind = "validation"
)

// Attention is a turn's open request to the user.
type Attention struct {
	Kind      AttentionKind
	RequestID string
	TurnID    string
	OpenedAt  time.Time
}

// PickerStatus is what a session picker shows of one session's
// conversation.
type PickerStatus struct {
	SessionID string // as asked
	// Found is false for an unknown session (the rest is zero).
	Found bool
	// RootID is the lineage root the status belongs to.
	RootID    string
	Execution Execution
	// TurnID is the running turn's id ("" for a bare lease, or when not
	// running).
	TurnID string
	// LastResult is the last turn's result while no newer turn was
	// admitted (nil otherwise).
	LastResult *TurnResult
	// Attention is the running turn's open request (Kind none when it has
	// none, unknown when the turn reports nothing; the zero value when
	// not running).
	Attention Attention
}

// PickerStatuses returns the PickerStatus of each session id, in order,
// read in one snapshot. An unknown id gives a status with Found false,
// never an error for the others.
func (s *Store) PickerStatuses(ctx context.Context, ids []string) ([]PickerStatus, error) {
	const op = "get picker statuses"
	for _, id := range ids {
		if err := rules.CheckID("session id", id); err != nil {
			return nil, opErr(op, id, err)
		}
	}
	var out []PickerStatus
	err := s.snapshot(ctx, op, "", func(q driver.Executor) error {
		out = make([]PickerStatus, len(ids))
		at := time.Now()
		for i, id := range ids {
			st, err := pickerStatus(ctx, q, id, at)
			if err != nil {
				return err
			}
			out[i] = st
		}
		return nil
	})
	return out, err
}

func pickerStatus(ctx context.Context, q driver.Executor, id string, at time.Time) (PickerStatus, error) {
	st := PickerStatus{SessionID: id}
	root, err := conversationRoot(ctx, q, id)
	if errors.Is(err, ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st.Found, st.RootID, st.Execution = true, root, ExecutionUnknown
	lease, err := turnLeases.current(ctx, q, root)
	if err != nil {
		return st, err
	}
	obs, err := q.TurnObservationGet(ctx, root)
	found := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return st, err
	}
	switch {
	case found && obs.Result != nil:
		st.Execution = ExecutionIdle
		st.LastResult = &TurnResult{TurnID: rules.Str(obs.TurnID), Outcome: TurnOutcome(*obs.Result),
			At: fromMillis(derefInt(obs.FinishedAt))}
	case lease.Live(at):
		st.Execution = ExecutionRunning
		st.Attention.Kind = AttentionUnknown
		if found && obs.TurnID != nil && obs.Holder == lease.Holder {
			st.TurnID = *obs.TurnID
			st.Attention = Attention{Kind: AttentionNone}
			if obs.AttentionKind != nil {
				st.Attention = Attention{Kind: AttentionKind(*obs.AttentionKind), RequestID: rules.Str(obs.AttentionRequestID),
					TurnID: rules.Str(obs.AttentionTurnID), OpenedAt: fromMillis(derefInt(obs.AttentionOpenedAt))}
			}
		}
	}
	return st, nil
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// BeginTurn starts a turn of the conversation sessionID belongs to, as the
// holder of its turn lease (ErrLeaseLost otherwise), and returns the
// turn's id. The conversation reads running, and its last result and any
// open attention request are gone, in the same transaction.
func (s *Store) BeginTurn(ctx context.Context, sessionID, holder string) (string, error) {
	const op = "begin turn"
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, 0)); err != nil {
		return "", opErr(op, sessionID, err)
	}
	turn := newUID()
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		if err := holdTurn(ctx, tx, sessionID, holder); err != nil {
			return err
		}
		root, err := conversationRoot(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		return tx.TurnObservationBegin(ctx, driver.TurnObservationBeginParams{ConversationID: root,
			Holder: holder, AdmittedAt: now(), TurnID: &turn})
	})
	if err != nil {
		return "", err
	}
	return turn, nil
}

// FinishTurn records how turnID ended, as the holder of the turn lease.
// Only the conversation's current turn, and only once: a second finish,
// or a turn another BeginTurn has replaced, is ErrConflict; a lease not
// held ErrLeaseLost. The conversation then reads idle with this result
// until a new turn lease or turn is admitted.
func (s *Store) FinishTurn(ctx context.Context, sessionID, holder, turnID string, outcome TurnOutcome) error {
	const op = "finish turn"
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, 0), rules.CheckLabel("turn id", turnID)); err != nil {
		return opErr(op, sessionID, err)
	}
	if !outcome.Valid() {
		return opErr(op, sessionID, invalid("outcome %q is not complete, interrupted or error", outcome))
	}
	return s.turnObservation(ctx, op, sessionID, holder, turnID, func(ctx context.Context, tx driver.Executor, root string) (int64, error) {
		return tx.TurnObservationFinish(ctx, driver.TurnObservationFinishParams{ConversationID: root,
			TurnID: &turnID, Result: rules.Ptr(string(outcome)), FinishedAt: new(now())})
	})
}

// OpenAttention records that turnID waits for the user (a question, an
// approval), as the holder of the turn lease; it replaces any request the
// turn had open. Errors as FinishTurn.
func (s *Store) OpenAttention(ctx context.Context, sessionID, holder, turnID string, kind AttentionKind, requestID string) error {
	const op = "open attention"
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, 0), rules.CheckLabel("turn id", turnID),
		rules.CheckLabel("attention kind", string(kind)), rules.CheckLabel("request id", requestID)); err != nil {
		return opErr(op, sessionID, err)
	}
	if kind == "" || kind == AttentionNone || kind == AttentionUnknown || requestID == "" {
		return opErr(op, sessionID, invalid("attention needs a kind (not none or unknown) and a request id"))
	}
	return s.turnObservation(ctx, op, sessionID, holder, turnID, func(ctx context.Context, tx driver.Executor, root string) (int64, error) {
		return tx.TurnObservationOpenAttention(ctx, driver.TurnObservationOpenAttentionParams{ConversationID: root,
			TurnID: &turnID, AttentionKind: rules.Ptr(string(kind)), AttentionRequestID: &requestID,
			AttentionOpenedAt: new(now())})
	})
}

// ResolveAttention closes turnID's request requestID, as the holder of the
// turn lease. Another turn's, or another request's, is ErrConflict.
func (s *Store) ResolveAttention(ctx context.Context, sessionID, holder, turnID, requestID string) error {
	const op = "resolve attention"
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, 0), rules.CheckLabel("turn id", turnID),
		rules.CheckLabel("request id", requestID)); err != nil {
		return opErr(op, sessionID, err)
	}
	return s.turnObservation(ctx, op, sessionID, holder, turnID, func(ctx context.Context, tx driver.Executor, root string) (int64, error) {
		return tx.TurnObservationResolveAttention(ctx, driver.TurnObservationResolveAttentionParams{ConversationID: root,
			TurnID: &turnID, AttentionRequestID: &requestID})
	})
}

// turnObservation runs change on the conversation's observation as the
// lease's holder; no row changed is ErrConflict.
func (s *Store) turnObservation(ctx context.Context, op, sessionID, holder, turnID string,
	change func(ctx context.Context, tx driver.Executor, root string) (int64, error)) error {
	return s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		if err := holdTurn(ctx, tx, sessionID, holder); err != nil {
			return err
		}
		root, err := conversationRoot(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		n, err := change(ctx, tx, root)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: turn %q is not the conversation's current unfinished turn (or holds no such request)", ErrConflict, turnID)
		}
		return nil
	})
}

// admitTurn runs in AcquireTurnLease's transaction when holder newly takes
// the lease (not when it extends its own): the last turn's result and
// attention are no longer the conversation's.
func admitTurn(ctx context.Context, tx driver.Executor, root, holder string) error {
	return tx.TurnObservationAdmit(ctx, driver.TurnObservationAdmitParams{ConversationID: root, Holder: holder, AdmittedAt: now()})
}
