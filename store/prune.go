package store

import (
	"context"
	"errors"
	"time"

	"github.com/sessiondb/sessiondb/store/driver"
)

// pruneBatch is how many candidate sessions one prune transaction weighs:
// the write lock is given back between batches.
const pruneBatch = 100

// PruneResult says what Prune did.
type PruneResult struct {
	Pruned int // sessions deleted, with their messages
	Spared int // old enough, but kept: pinned lineage, a live continuation, a live lease
	// (each such session counted once)
	Orphaned int // children of pruned sessions that were kept and unlinked
}

// Prune deletes sessions that ended, and saw no activity, more than
// olderThan ago. A conversation goes only as a whole: a session is spared
// while any session of its compression lineage is live, recent or pinned
// (so the ancestors of a live continuation stay), or holds a live lease.
// Children of pruned sessions that are not pruned themselves are kept and
// unlinked (orphaned), never deleted with them. Prune works in batches, so
// other writers get the lock between them, and records meta "last_prune".
func (s *Store) Prune(ctx context.Context, olderThan time.Duration) (PruneResult, error) {
	const op = "prune"
	if olderThan <= 0 {
		return PruneResult{}, opErr(op, "", invalid("prune age must be positive, got %v", olderThan))
	}
	cutoff := now() - olderThan.Milliseconds()
	var total PruneResult
	cursor := driver.SessionPruneCandidatesParams{Cutoff: &cutoff, AfterEnded: new(int64), RowLimit: pruneBatch}
	orphans := map[string]bool{} // children unlinked; counted if they survive
	for {
		var batch PruneResult
		var next *driver.SessionPruneCandidatesParams
		var unlinked []string
		err := s.write(ctx, op, "", s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
			batch, next, unlinked = PruneResult{}, nil, nil // fresh on every (re)play
			rows, err := tx.SessionPruneCandidates(ctx, cursor)
			if err != nil {
				return err
			}
			for _, r := range rows {
				ids, err := lineageIDs(ctx, tx, r.ID)
				if errors.Is(err, ErrNotFound) {
					continue // pruned earlier in this batch with its lineage
				}
				if err != nil {
					return err
				}
				ok, err := prunable(ctx, tx, ids, cutoff)
				if err != nil {
					return err
				}
				if !ok {
					batch.Spared++
					continue
				}
				for _, id := range ids {
					children, err := tx.SessionChildren(ctx, &id)
					if err != nil {
						return err
					}
					for _, c := range children {
						unlinked = append(unlinked, c.ID)
					}
					if err := removeSession(ctx, tx, id); err != nil {
						return err
					}
					batch.Pruned++
				}
			}
			if len(rows) == pruneBatch {
				last := rows[len(rows)-1]
				n := cursor
				n.AfterEnded, n.AfterID = last.EndedAt, last.ID
				next = &n
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total.Pruned += batch.Pruned
		total.Spared += batch.Spared
		for _, id := range unlinked {
			orphans[id] = true
		}
		if next == nil {
			break
		}
		cursor = *next
	}
	// Orphans are the unlinked children still there at the end (a
	// lineage's own members, and children pruned later, are not).
	err := s.read(ctx, op, "", func(q driver.Executor) error {
		for id := range orphans {
			if err := sessionMustExist(ctx, q, id); err == nil {
				total.Orphaned++
			} else if !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return total, err
	}
	return total, s.SetMeta(ctx, "last_prune", time.Now().UTC().Format(time.RFC3339))
}

// prunable reports whether a whole lineage may go: every session ended and
// idle before the cutoff, none pinned, none under a live lease.
func prunable(ctx context.Context, tx driver.Executor, ids []string, cutoff int64) (bool, error) {
	for _, id := range ids {
		r, err := tx.SessionGet(ctx, id)
		if err != nil {
			return false, err
		}
		if r.EndedAt == nil || *r.EndedAt >= cutoff || r.Pinned != 0 ||
			(r.LastActivityAt != nil && *r.LastActivityAt >= cutoff) {
			return false, nil
		}
		if err := leasesAllow(ctx, tx, id, ""); errors.Is(err, ErrLeaseHeld) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	return true, nil
}
