package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// DeleteOptions guard a delete.
type DeleteOptions struct {
	// ExpectedIDs, when non-nil, is the set the caller expects to delete
	// (as DeletionSet reported it, any order): when the cascade changed
	// since, the delete is refused with ErrConflict and nothing is deleted.
	ExpectedIDs []string
}

// DeletionSet returns what DeleteSession(id) would delete: id and its
// delegate descendants (sub-agent sessions live and die with their parent),
// id first. Other children are kept and lose their parent link.
func (s *Store) DeletionSet(ctx context.Context, id string) ([]string, error) {
	var ids []string
	err := s.snapshot(ctx, "get deletion set", id, func(q driver.Executor) (err error) {
		ids, err = deletionSet(ctx, q, id)
		return err
	})
	return ids, err
}

// DeleteSession deletes a session with its messages, usage and lock rows,
// and cascades to its delegate children (recursively); its other children
// (continuations, branches) are orphaned, not deleted. It is refused with
// ErrLeaseHeld while any session in the set has a live compression lock or
// turn lease. It returns the ids deleted.
func (s *Store) DeleteSession(ctx context.Context, id string, o DeleteOptions) ([]string, error) {
	const op = "delete session"
	if err := rules.CheckID("session id", id); err != nil {
		return nil, opErr(op, id, err)
	}
	var deleted []string
	err := s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		ids, err := deletionSet(ctx, tx, id)
		if err != nil {
			return err
		}
		if o.ExpectedIDs != nil && !sameSet(ids, o.ExpectedIDs) {
			return fmt.Errorf("%w: the sessions to delete are now %v", ErrConflict, ids)
		}
		for _, sid := range ids {
			if err := leasesAllow(ctx, tx, sid, ""); err != nil {
				return fmt.Errorf("session %q: %w", sid, err)
			}
		}
		for _, sid := range slices.Backward(ids) { // children before parents
			if err := removeSession(ctx, tx, sid); err != nil {
				return err
			}
		}
		deleted = ids
		return nil
	})
	return deleted, err
}

// deletionSet walks id's delegate descendants breadth first (at most
// maxChainWalk sessions; a cycle is visited once).
func deletionSet(ctx context.Context, q driver.Executor, id string) ([]string, error) {
	if err := sessionMustExist(ctx, q, id); err != nil {
		return nil, err
	}
	ids := []string{id}
	seen := map[string]bool{id: true}
	for i := 0; i < len(ids) && len(ids) < maxChainWalk; i++ {
		children, err := q.SessionChildren(ctx, &ids[i])
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		for _, c := range children {
			if ChildKind(rules.Str(c.ParentKind)).DiesWithParent() && !seen[c.ID] {
				seen[c.ID] = true
				ids = append(ids, c.ID)
			}
		}
	}
	return ids, nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// removeSession deletes one session row — its messages, usage and lock go
// with it (ON DELETE CASCADE; the FTS triggers unindex the messages) —
// after unlinking the children that stay.
//
// An unlinked compression continuation becomes its conversation's root:
// its last activity no longer folds in the deleted session's.
func removeSession(ctx context.Context, tx driver.Executor, id string) error {
	children, err := tx.SessionChildren(ctx, &id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if _, err := tx.SessionOrphanChildren(ctx, &id); err != nil {
		return err
	}
	if _, err := tx.SessionDelete(ctx, id); err != nil {
		return err
	}
	for _, c := range children {
		if ChildKind(rules.Str(c.ParentKind)).Continues() {
			if err := recomputeConversationActivity(ctx, tx, c.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
