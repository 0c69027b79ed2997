package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// RewindOptions are the compare-and-set guards of a rewind: what the
// caller saw when it decided to rewind. Unset guards are not checked.
type RewindOptions struct {
	// ExpectedActiveIDs is the session's active message ids as the caller
	// saw them (ErrConflict when they changed).
	ExpectedActiveIDs []int64
	// ExpectedContent is the target message's content as the caller saw it
	// (ErrConflict when it differs).
	ExpectedContent *string
	// LeaseHolder is the caller's own turn-lease or compression-lock holder:
	// a lease it holds does not block its rewind. Any other live lease on
	// the conversation refuses the rewind with ErrLeaseHeld.
	LeaseHolder string
}

// RewindResult says what a rewind did.
type RewindResult struct {
	Rewound int64   // rows that became rewound, the target among them
	Target  Message // the target as it was before the rewind
	HeadID  int64   // the newest active message left (0 when none)
}

// RewindTo undoes the session's conversation back to before the user
// message target: the target and every active row after it become rewound
// — kept, but out of the conversation and out of search — the session's
// counters are recomputed and its rewind count goes up. The target must be
// an active user message of the session (ErrInvalidInput otherwise).
func (s *Store) RewindTo(ctx context.Context, sessionID string, target int64, o RewindOptions) (RewindResult, error) {
	const op = "rewind session"
	if err := rules.CheckID("session id", sessionID); err != nil {
		return RewindResult{}, opErr(op, sessionID, err)
	}
	if target <= 0 {
		return RewindResult{}, opErr(op, sessionID, invalid("target message id %d", target))
	}
	var res RewindResult
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		res = RewindResult{}
		reason, err := tx.SessionEndReason(ctx, sessionID)
		if err != nil {
			return err
		}
		if rules.Str(reason) == compressionEndReason {
			return fmt.Errorf("%w: it continues in a compression child; rewind there", ErrSessionClosed)
		}
		row, err := tx.MessageGet(ctx, target)
		if errors.Is(err, ErrNotFound) || (err == nil && row.SessionID != sessionID) {
			return fmt.Errorf("message %d: %w", target, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if res.Target, err = messageFromRow(&row); err != nil {
			return err
		}
		switch {
		case row.Role != string(RoleUser):
			return invalid("message %d is a %s message; a rewind targets a user message", target, row.Role)
		case row.State != string(StateActive):
			return invalid("message %d is %s, not active", target, row.State)
		case o.ExpectedContent != nil && *o.ExpectedContent != row.Content:
			return fmt.Errorf("%w: message %d's content", ErrConflict, target)
		}
		if o.ExpectedActiveIDs != nil {
			ids, err := tx.MessageActiveIDs(ctx, sessionID)
			if err != nil {
				return err
			}
			if !slices.Equal(ids, o.ExpectedActiveIDs) {
				return fmt.Errorf("%w: the active messages", ErrConflict)
			}
		}
		if err := leasesAllow(ctx, tx, sessionID, o.LeaseHolder); err != nil {
			return err
		}
		if res.Rewound, err = tx.MessageRewindFrom(ctx, driver.MessageRewindFromParams{SessionID: sessionID, FromID: target}); err != nil {
			return err
		}
		if err := tx.SessionCountRewind(ctx, sessionID); err != nil {
			return err
		}
		if res.Rewound > 0 {
			if err := tx.SessionBumpDisplayRevision(ctx, sessionID); err != nil {
				return err
			}
		}
		if err := tx.SessionRecount(ctx, sessionID); err != nil {
			return err
		}
		res.HeadID, err = tx.MessageActiveWatermark(ctx, sessionID)
		return err
	})
	return res, err
}

// leasesAllow returns ErrLeaseHeld when a live turn lease on the session's
// conversation, or a live compression lock on the session, is held by
// anyone but holder.
func leasesAllow(ctx context.Context, tx driver.Executor, sessionID, holder string) error {
	if err := compressionLocks.blocks(ctx, tx, sessionID, holder); err != nil {
		return fmt.Errorf("compression lock: %w", err)
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
