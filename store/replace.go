package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// ReplaceOptions are the guards of ReplaceMessages: what the caller saw
// when it built the new set. Unset guards are not checked.
type ReplaceOptions struct {
	// ExpectedActiveIDs is the session's active message ids as the caller
	// read them (ErrConflict when they changed since: a turn arrived while
	// the caller was rewriting the transcript).
	ExpectedActiveIDs []int64
	// LeaseHolder is the caller's own turn-lease or compression-lock
	// holder: a lease it holds does not block the replacement. Any other
	// live lease on the conversation refuses it with ErrLeaseHeld.
	LeaseHolder string
}

// ReplaceMessages replaces a session's live conversation with ms, in one
// transaction: every active message becomes rewound — kept, out of the
// conversation and out of search, as after a rewind — and ms are appended
// after them; the counters are recomputed. This is a fork: a caller that
// edited, pruned or rebuilt the transcript (Messages, change, replace)
// writes it back whole. Compacted messages (what compression summarised)
// stay as they are. The replaced messages hand their idempotency keys and
// platform message ids to the new set, so a message written back under
// its own key is a new row, not a repeat of the old one. A session closed
// by compression is refused (ErrSessionClosed: replace in its
// continuation); ms are checked as AppendMessages checks them, before
// anything changes. It returns the new messages' ids.
func (s *Store) ReplaceMessages(ctx context.Context, sessionID string, ms []NewMessage, o ReplaceOptions) ([]int64, error) {
	const op = "replace messages"
	if err := rules.CheckID("session id", sessionID); err != nil {
		return nil, opErr(op, sessionID, err)
	}
	prepared, err := prepareMessages(sessionID, ms, s.MaxMessageBytes())
	if err != nil {
		return nil, opErr(op, sessionID, err)
	}
	var ids []int64
	err = s.write(ctx, op, sessionID, s.opts.TranscriptPatience, func(ctx context.Context, tx driver.Executor) (err error) {
		reason, err := tx.SessionEndReason(ctx, sessionID)
		if err != nil {
			return err
		}
		if rules.Str(reason) == compressionEndReason {
			return fmt.Errorf("%w: it continues in a compression child; replace there", ErrSessionClosed)
		}
		if o.ExpectedActiveIDs != nil {
			active, err := tx.MessageActiveIDs(ctx, sessionID)
			if err != nil {
				return err
			}
			if !slices.Equal(active, o.ExpectedActiveIDs) {
				return fmt.Errorf("%w: the active messages", ErrConflict)
			}
		}
		if err := leasesAllow(ctx, tx, sessionID, o.LeaseHolder); err != nil {
			return err
		}
		if _, err := tx.MessageRetireActive(ctx, sessionID); err != nil {
			return err
		}
		ids = []int64{}
		if len(prepared) > 0 {
			if ids, _, err = insertMessages(ctx, tx, sessionID, prepared); err != nil {
				return err
			}
		}
		// The display transcript changed (issue 35's revision): once.
		if err := tx.SessionBumpDisplayRevision(ctx, sessionID); err != nil {
			return err
		}
		return tx.SessionRecount(ctx, sessionID)
	})
	if err != nil {
		return nil, err
	}
	s.appended.Add(uint64(len(ids)))
	return ids, nil
}
