package store

import (
	"context"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// TouchActivity records activity on the session at time at (zero means
// now). It is monotonic: last_activity_at never moves backwards, and a
// touch older than the recorded one changes nothing — not even the
// labels — and returns nil. An empty description or provenance keeps the
// current label; ClearActivityLabels removes them. An unknown session
// gives ErrNotFound.
//
// Activity is the agent's heartbeat on a session: when it last did
// something, and optionally what ("running tests") and on whose behalf
// (provenance: "tool:shell", "subagent:review"). Pickers show it while a
// turn runs; last_activity_at also feeds "last active".
//
// Both calls wait at most Options.ActivityPatience (500 ms by default) for
// another process's write lock and then give up with ErrLocked: a
// heartbeat must never stall the turn it reports on, and the next one
// replaces a missed one.
func (s *Store) TouchActivity(ctx context.Context, id string, at time.Time, description, provenance string) error {
	const op = "touch activity"
	if err := rules.CheckID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	if err := rules.CheckLabel("activity description", description); err != nil {
		return opErr(op, id, err)
	}
	if err := rules.CheckLabel("activity provenance", provenance); err != nil {
		return opErr(op, id, err)
	}
	if at.IsZero() {
		at = time.Now()
	}
	if at.Before(time.UnixMilli(0)) {
		return opErr(op, id, invalid("activity time %v is before 1970", at))
	}
	ms := at.UnixMilli()
	return s.write(ctx, op, id, s.opts.ActivityPatience, func(ctx context.Context, tx driver.Executor) error {
		n, err := tx.SessionActivityTouch(ctx, driver.SessionActivityTouchParams{
			ID: id, At: &ms, Description: rules.Ptr(description), Provenance: rules.Ptr(provenance)})
		if err != nil {
			return err
		}
		if n == 1 {
			return raiseConversationActivity(ctx, tx, id)
		}
		return sessionMustExist(ctx, tx, id) // older than the recorded touch: nothing to do
	})
}

// ClearActivityLabels removes the activity description and provenance
// (at the end of a turn) and keeps the activity time. An unknown session
// gives ErrNotFound.
func (s *Store) ClearActivityLabels(ctx context.Context, id string) error {
	const op = "clear activity labels"
	if err := rules.CheckID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	return s.write(ctx, op, id, s.opts.ActivityPatience, func(ctx context.Context, tx driver.Executor) error {
		n, err := tx.SessionActivityClearLabels(ctx, id)
		if err == nil && n == 0 {
			err = ErrNotFound
		}
		return err
	})
}
