package store

import (
	"context"
	"errors"

	"github.com/sessiondb/sessiondb/store/driver"
)

// maxChainWalk caps a lineage walk: a cycle or a pathological chain costs
// a bounded number of steps.
const maxChainWalk = 1000

// Lineage returns the conversation id belongs to, oldest first: its
// compression ancestors from the root, id itself, then the continuations
// down to the compression tip. A session that was never compressed is a
// lineage of one. At most 1000 sessions are walked.
func (s *Store) Lineage(ctx context.Context, id string) ([]Session, error) {
	var out []Session
	err := s.snapshot(ctx, "get lineage", id, func(q driver.Executor) error {
		ids, err := lineageIDs(ctx, q, id)
		if err != nil {
			return err
		}
		out = make([]Session, len(ids))
		for i, sid := range ids {
			row, err := q.SessionGet(ctx, sid)
			if err != nil {
				return err
			}
			out[i] = sessionFromRow(row)
		}
		return nil
	})
	return out, err
}

// CompressionTip returns the session that carries id's conversation on
// now: the last of its lineage (id itself when it was never compressed).
func (s *Store) CompressionTip(ctx context.Context, id string) (Session, error) {
	var tip Session
	err := s.snapshot(ctx, "get compression tip", id, func(q driver.Executor) error {
		ids, err := lineageIDs(ctx, q, id)
		if err != nil {
			return err
		}
		row, err := q.SessionGet(ctx, ids[len(ids)-1])
		tip = sessionFromRow(row)
		return err
	})
	return tip, err
}

// lineageIDs walks id's conversation from the root to the tip.
func lineageIDs(ctx context.Context, q driver.Executor, id string) ([]string, error) {
	if err := sessionMustExist(ctx, q, id); err != nil {
		return nil, err
	}
	up, err := q.SessionAncestors(ctx, id)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(up)+1)
	seen := make(map[string]bool, len(up)+1)
	for i := len(up) - 1; i >= 0; i-- {
		if !seen[up[i]] { // a cycle in the parent links lists a session twice
			seen[up[i]] = true
			ids = append(ids, up[i])
		}
	}
	if seen[id] {
		return ids, nil
	}
	for cur := id; !seen[cur] && len(ids) < maxChainWalk; {
		seen[cur] = true
		ids = append(ids, cur)
		next, err := q.SessionContinuation(ctx, &cur)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return ids, nil
}
