package store

import (
	"context"
	"math"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// maxAroundWindow caps each side of MessagesAround.
const maxAroundWindow = 1000

// MessageWindow is a session's messages around one of them: what a
// search hit or a link opens on, with the conversation's ends in view.
type MessageWindow struct {
	// Before are up to the asked number of messages just before Anchor,
	// After those just after it, each oldest first.
	Before []Message
	Anchor Message
	After  []Message
	// First and Last are the session's first and last messages — the
	// bookends — when they lie outside the window (nil when the window
	// reaches them).
	First, Last *Message
}

// MessagesAround returns the messages of sessionID around the message id:
// up to before messages before it and after after it, and the session's
// first and last messages when the window does not reach them, all read in
// one snapshot. Rewound messages are not part of it (the anchor may be
// one: a search of rewound rows opens on it). A message that is not the
// session's gives ErrNotFound, as does an unknown session; a negative
// window or one over 1000 a side ErrInvalidInput.
func (s *Store) MessagesAround(ctx context.Context, sessionID string, id int64, before, after int) (MessageWindow, error) {
	const op = "messages around"
	if err := rules.CheckID("session id", sessionID); err != nil {
		return MessageWindow{}, opErr(op, sessionID, err)
	}
	if before < 0 || after < 0 || before > maxAroundWindow || after > maxAroundWindow {
		return MessageWindow{}, opErr(op, sessionID, invalid("window of %d before and %d after: each side 0 to %d", before, after, maxAroundWindow))
	}
	var w MessageWindow
	err := s.snapshot(ctx, op, sessionID, func(q driver.Executor) error {
		w = MessageWindow{}
		if err := sessionMustExist(ctx, q, sessionID); err != nil {
			return err
		}
		row, err := q.MessageGet(ctx, id)
		if err != nil {
			return err
		}
		if row.SessionID != sessionID {
			return ErrNotFound
		}
		if w.Anchor, err = messageFromRow(&row); err != nil {
			return err
		}
		desc, err := q.MessageListDescending(ctx, driver.MessageListDescendingParams{
			SessionID: sessionID, BeforeID: id, RowLimit: int64(before) + 1})
		if err != nil {
			return err
		}
		moreBefore := len(desc) > before
		desc = desc[:min(len(desc), before)]
		for i := len(desc) - 1; i >= 0; i-- {
			m, err := messageFromRow(&desc[i])
			if err != nil {
				return err
			}
			w.Before = append(w.Before, m)
		}
		asc, err := q.MessageListAscending(ctx, driver.MessageListAscendingParams{
			SessionID: sessionID, AfterID: id, BeforeID: math.MaxInt64, RowLimit: int64(after) + 1})
		if err != nil {
			return err
		}
		moreAfter := len(asc) > after
		for i := range asc[:min(len(asc), after)] {
			m, err := messageFromRow(&asc[i])
			if err != nil {
				return err
			}
			w.After = append(w.After, m)
		}
		if moreBefore {
			first, err := q.MessageListAscending(ctx, driver.MessageListAscendingParams{
				SessionID: sessionID, BeforeID: math.MaxInt64, RowLimit: 1})
			if err != nil || len(first) == 0 {
				return err
			}
			m, err := messageFromRow(&first[0])
			if err != nil {
				return err
			}
			w.First = &m
		}
		if moreAfter {
			last, err := q.MessageListDescending(ctx, driver.MessageListDescendingParams{
				SessionID: sessionID, BeforeID: math.MaxInt64, RowLimit: 1})
			if err != nil || len(last) == 0 {
				return err
			}
			m, err := messageFromRow(&last[0])
			if err != nil {
				return err
			}
			w.Last = &m
		}
		return nil
	})
	return w, err
}
