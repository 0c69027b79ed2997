package store

import (
	"context"
	"errors"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A session's conversation_active_at (Session.ConversationActiveAt) is the
// newest message or heartbeat of the session and of its compression
// ancestors, never before its start. Appends and heartbeats move it
// forward in the statements they already run (migration 23 and pg's 12);
// this file recomputes it when a compression link changes — a continuation
// published, a parent deleted, a link made by an import — because then the
// ancestors it folds in are others.

// ownActivity is a session's own newest sign of activity: its newest
// message, its latest heartbeat, else its start.
func ownActivity(r driver.Session) int64 {
	at := r.StartedAt
	for _, t := range []*int64{r.LastMessageAt, r.LastActivityAt} {
		if t != nil && *t > at {
			at = *t
		}
	}
	return at
}

// recomputeConversationActivity sets id's conversation_active_at from its
// own activity and its compression parent's value, then does the same for
// its compression descendants (fork siblings included), at most
// maxChainWalk sessions; a cycle is walked once. Inside the caller's
// transaction.
func recomputeConversationActivity(ctx context.Context, tx driver.Executor, id string) error {
	row, err := tx.SessionGet(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil // deleted in this transaction
	}
	if err != nil {
		return err
	}
	inherited := int64(0)
	if row.ParentSessionID != nil && ChildKind(rules.Str(row.ParentKind)).Continues() {
		parent, err := tx.SessionGet(ctx, *row.ParentSessionID)
		switch {
		case err == nil:
			inherited = ownActivity(parent)
			if parent.ConversationActiveAt != nil {
				inherited = max(inherited, *parent.ConversationActiveAt)
			}
		case !errors.Is(err, ErrNotFound):
			return err
		}
	}
	type step struct {
		row       driver.Session
		inherited int64
	}
	queue := []step{{row, inherited}}
	seen := map[string]bool{id: true}
	for i := 0; i < len(queue) && i < maxChainWalk; i++ {
		cur := queue[i]
		at := max(ownActivity(cur.row), cur.inherited)
		if err := tx.SessionConversationActivitySet(ctx, driver.SessionConversationActivitySetParams{
			ID: cur.row.ID, At: &at}); err != nil {
			return err
		}
		children, err := tx.SessionChildren(ctx, &cur.row.ID)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		for _, c := range children {
			if seen[c.ID] || !ChildKind(rules.Str(c.ParentKind)).Continues() {
				continue
			}
			seen[c.ID] = true
			child, err := tx.SessionGet(ctx, c.ID)
			if err != nil {
				return err
			}
			queue = append(queue, step{child, at})
		}
	}
	return nil
}

// raiseConversationActivity carries a heartbeat on id down to its
// compression descendants: nothing to do (one index probe) for a session
// nobody continued, the usual case.
func raiseConversationActivity(ctx context.Context, tx driver.Executor, id string) error {
	children, err := tx.SessionChildren(ctx, &id)
	if err != nil && !errors.Is(err, ErrNotFound) {
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

// reactivateLineage takes back the idle sweep's archive of id's whole
// conversation (AutoArchiveSessions), and leaves a person's archive as it
// is.
func reactivateLineage(ctx context.Context, tx driver.Executor, id string) error {
	ids, err := lineageIDs(ctx, tx, id)
	if err != nil {
		return err
	}
	for _, sid := range ids {
		if _, err := tx.SessionReactivate(ctx, sid); err != nil {
			return err
		}
	}
	return nil
}
