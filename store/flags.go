package store

import (
	"context"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// SetArchived archives (or unarchives) the whole conversation id belongs
// to: every session of its compression lineage, so an archived
// conversation does not resurface through its tip. It returns how many
// sessions it set.
func (s *Store) SetArchived(ctx context.Context, id string, archived bool) (int, error) {
	return s.setFlags(ctx, "set archived", id, driver.SessionSetFlagsParams{Archived: flag(archived)})
}

// SetPinned pins (or unpins) id's whole lineage; pinning also unhides it.
// Prune spares pinned conversations.
func (s *Store) SetPinned(ctx context.Context, id string, pinned bool) (int, error) {
	return s.setFlags(ctx, "set pinned", id, driver.SessionSetFlagsParams{Pinned: flag(pinned)})
}

// SetHidden hides (or shows) id's whole lineage. A hidden conversation is
// left out of search results and pickers, and kept otherwise.
func (s *Store) SetHidden(ctx context.Context, id string, hidden bool) (int, error) {
	return s.setFlags(ctx, "set hidden", id, driver.SessionSetFlagsParams{Hidden: flag(hidden)})
}

// MarkRead marks id's whole lineage read (now) or, with read false,
// explicitly unread (Session.Unread).
func (s *Store) MarkRead(ctx context.Context, id string, read bool) (int, error) {
	return s.setFlags(ctx, "mark read", id, driver.SessionSetFlagsParams{Read: flag(read)})
}

func (s *Store) setFlags(ctx context.Context, op, id string, p driver.SessionSetFlagsParams) (int, error) {
	if err := rules.CheckID("session id", id); err != nil {
		return 0, opErr(op, id, err)
	}
	var n int
	err := s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		ids, err := lineageIDs(ctx, tx, id)
		if err != nil {
			return err
		}
		n = 0
		at := now()
		p.ReadAt = &at
		for _, sid := range ids {
			p.ID = sid
			changed, err := tx.SessionSetFlags(ctx, p)
			if err != nil {
				return err
			}
			n += int(changed)
		}
		return nil
	})
	return n, err
}

// flag is a stored 0/1 for a set flag.
func flag(on bool) *int64 {
	v := rules.B2I(on)
	return &v
}
