package store

import (
	"context"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// ClearOptions guard ClearConversation.
type ClearOptions struct {
	// LeaseHolder is the caller's turn lease or compression lock holder,
	// if it holds one: a lease or lock held by anyone else refuses the
	// clear (ErrLeaseHeld), as it refuses a rewind.
	LeaseHolder string
}

// ClearResult says what ClearConversation removed.
type ClearResult struct {
	RootID     string   // the lineage's root
	SessionIDs []string // the sessions cleared, root to tip
	Messages   int64    // messages deleted, in every state
	Receipts   int64    // command receipts deleted
}

// ClearConversation deletes every message and command receipt of the
// conversation sessionID belongs to — each session of its lineage, root
// to compression tip — in one transaction, and keeps the sessions: their
// titles, flags, model config, usage and links stay, and the conversation
// goes on where it was (the tip). Unlike a rewind nothing is kept to
// restore: the rows are gone, from search too. Each session that lost a
// row moves its display revision once. Branches and delegates are other
// conversations and are left alone. A live turn lease or compression lock
// held by someone other than o.LeaseHolder refuses it (ErrLeaseHeld),
// leaving everything as it was.
func (s *Store) ClearConversation(ctx context.Context, sessionID string, o ClearOptions) (ClearResult, error) {
	const op = "clear conversation"
	if err := rules.CheckID("session id", sessionID); err != nil {
		return ClearResult{}, opErr(op, sessionID, err)
	}
	if o.LeaseHolder != "" {
		if err := checkLease(o.LeaseHolder, 0); err != nil {
			return ClearResult{}, opErr(op, sessionID, err)
		}
	}
	var res ClearResult
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		res = ClearResult{}
		ids, err := lineageIDs(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := leasesAllow(ctx, tx, id, o.LeaseHolder); err != nil {
				return err
			}
		}
		res.RootID, res.SessionIDs = ids[0], ids
		for _, id := range ids {
			n, err := tx.MessageDeleteSession(ctx, id)
			if err != nil {
				return err
			}
			r, err := tx.CommandReceiptDeleteSession(ctx, id)
			if err != nil {
				return err
			}
			res.Messages, res.Receipts = res.Messages+n, res.Receipts+r
			if n+r == 0 {
				continue
			}
			if err := tx.SessionBumpDisplayRevision(ctx, id); err != nil {
				return err
			}
			if err := tx.SessionRecount(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
	return res, err
}
