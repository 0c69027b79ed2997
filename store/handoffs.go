package store

import (
	"context"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// HandoffStatus is where a handoff stands. A handoff passes a session to
// another platform (a gateway picks up a conversation started in the CLI,
// say); it is a small state machine kept on the session row:
//
//	none, completed, failed --RequestHandoff--> pending
//	pending --ClaimHandoff--> running (holder)
//	running --CompleteHandoff / FailHandoff (same holder)--> completed / failed
//	running, stale --ReclaimStaleHandoffs--> pending
//
// Every transition is one conditional UPDATE naming the state it leaves
// (compare-and-set), so racing workers cannot both move a handoff. A
// transition that finds the handoff in another state fails with
// ErrConflict, except a claim, which reports false.
type HandoffStatus string

// The handoff states.
const (
	HandoffNone      HandoffStatus = "" // never requested
	HandoffPending   HandoffStatus = "pending"
	HandoffRunning   HandoffStatus = "running"
	HandoffCompleted HandoffStatus = "completed"
	HandoffFailed    HandoffStatus = "failed"
)

// HandoffState is a session's handoff as last written.
type HandoffState struct {
	State    HandoffStatus
	Platform string // where the session is handed to
	Holder   string // the worker that claimed it (running, completed, failed)
	Error    string // why it failed
	// UpdatedAt is the last transition (zero when never requested).
	UpdatedAt time.Time
}

// RequestHandoff asks for the session to be handed to platform. It moves a
// handoff that is none, completed or failed to pending (clearing the
// holder and error); a handoff already pending or running gives
// ErrConflict.
func (s *Store) RequestHandoff(ctx context.Context, id, platform string) error {
	const op = "request handoff"
	if err := rules.CheckID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	if err := rules.CheckID("platform", platform); err != nil {
		return opErr(op, id, err)
	}
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		at := now()
		n, err := tx.SessionHandoffRequest(ctx, driver.SessionHandoffRequestParams{
			ID: id, Platform: &platform, UpdatedAt: &at})
		if err != nil || n == 1 {
			return err
		}
		return handoffLost(ctx, tx, id, "none, completed or failed")
	})
}

// ClaimHandoff moves a pending handoff to running, held by holder, and
// reports whether this call did. Of several workers claiming the same
// handoff exactly one gets true; the others (and a claim with nothing
// pending) get false and no error. An unknown session gives ErrNotFound.
func (s *Store) ClaimHandoff(ctx context.Context, id, holder string) (claimed bool, err error) {
	const op = "claim handoff"
	if err := rules.CheckID("session id", id); err != nil {
		return false, opErr(op, id, err)
	}
	if err := rules.CheckID("holder", holder); err != nil {
		return false, opErr(op, id, err)
	}
	err = s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		at := now()
		n, err := tx.SessionHandoffClaim(ctx, driver.SessionHandoffClaimParams{
			ID: id, Holder: &holder, UpdatedAt: &at})
		claimed = n == 1
		if err != nil || claimed {
			return err
		}
		return sessionMustExist(ctx, tx, id)
	})
	return claimed, err
}

// CompleteHandoff marks a handoff running under holder as completed. A
// handoff in another state, or held by someone else, gives ErrConflict.
func (s *Store) CompleteHandoff(ctx context.Context, id, holder string) error {
	return s.finishHandoff(ctx, "complete handoff", id, holder, HandoffCompleted, "")
}

// FailHandoff marks a handoff running under holder as failed, with errMsg
// saying why. A handoff in another state, or held by someone else, gives
// ErrConflict. A failed handoff may be requested again.
func (s *Store) FailHandoff(ctx context.Context, id, holder, errMsg string) error {
	return s.finishHandoff(ctx, "fail handoff", id, holder, HandoffFailed, errMsg)
}

func (s *Store) finishHandoff(ctx context.Context, op, id, holder string, to HandoffStatus, errMsg string) error {
	if err := rules.CheckID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	if err := rules.CheckID("holder", holder); err != nil {
		return opErr(op, id, err)
	}
	if err := rules.CheckText("handoff error", errMsg); err != nil {
		return opErr(op, id, err)
	}
	state := string(to)
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		at := now()
		n, err := tx.SessionHandoffFinish(ctx, driver.SessionHandoffFinishParams{
			ID: id, Holder: &holder, State: &state, Error: rules.Ptr(errMsg), UpdatedAt: &at})
		if err != nil || n == 1 {
			return err
		}
		return handoffLost(ctx, tx, id, fmt.Sprintf("running under %q", holder))
	})
}

// ReclaimStaleHandoffs returns to pending every running handoff whose last
// transition is older than olderThan (its worker is presumed gone),
// clearing the holder so another worker can claim it. It returns how many
// it reclaimed.
func (s *Store) ReclaimStaleHandoffs(ctx context.Context, olderThan time.Duration) (int, error) {
	const op = "reclaim stale handoffs"
	if olderThan <= 0 {
		return 0, opErr(op, "", invalid("olderThan must be positive, got %v", olderThan))
	}
	var reclaimed int
	err := s.write(ctx, op, "", s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		at := now()
		cutoff := at - olderThan.Milliseconds()
		n, err := tx.SessionHandoffReclaimStale(ctx, driver.SessionHandoffReclaimStaleParams{
			UpdatedAt: &at, Cutoff: &cutoff})
		reclaimed = int(n)
		return err
	})
	return reclaimed, err
}

// Handoff returns the session's handoff state (State HandoffNone when
// never requested). An unknown session gives ErrNotFound.
func (s *Store) Handoff(ctx context.Context, id string) (HandoffState, error) {
	var h HandoffState
	err := s.read(ctx, "get handoff", id, func(q driver.Executor) error {
		var err error
		h, err = readHandoff(ctx, q, id)
		return err
	})
	return h, err
}

func readHandoff(ctx context.Context, q driver.Executor, id string) (HandoffState, error) {
	r, err := q.SessionHandoffGet(ctx, id)
	if err != nil {
		return HandoffState{}, err
	}
	h := HandoffState{State: HandoffStatus(rules.Str(r.HandoffState)), Platform: rules.Str(r.HandoffPlatform),
		Holder: rules.Str(r.HandoffHolder), Error: rules.Str(r.HandoffError)}
	if r.HandoffUpdatedAt != nil {
		h.UpdatedAt = fromMillis(*r.HandoffUpdatedAt)
	}
	return h, nil
}

// handoffLost explains a transition whose compare-and-set matched no row:
// the session does not exist (ErrNotFound), or its handoff is not in the
// state the transition leaves (ErrConflict, naming the state found).
func handoffLost(ctx context.Context, tx driver.Executor, id, want string) error {
	h, err := readHandoff(ctx, tx, id)
	if err != nil {
		return err
	}
	found := string(h.State)
	if h.State == HandoffNone {
		found = "none"
	}
	if h.Holder != "" {
		found += fmt.Sprintf(" under %q", h.Holder)
	}
	return fmt.Errorf("%w: the handoff is %s, not %s", ErrConflict, found, want)
}
