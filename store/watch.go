package store

import (
	"context"
	"iter"
)

// WatchMessages streams a session's messages with ids above afterID as
// they are committed — by this handle, another process or another
// machine — in id order, each once: first those already there, then each
// new one soon after its commit (SQLite: within the engine's poll of the
// file, tens of milliseconds; PostgreSQL: at the commit's NOTIFY, or its
// poll where LISTEN is unavailable). afterID 0 starts at the session's
// first message; a message's ID starts after it, so a reader that
// reconnects resumes with the last id it saw.
//
// The stream runs until ctx ends or the caller stops ranging, both of
// which end it without an error. It ends with an error when the session
// is unknown or deleted (ErrNotFound), the store is closed (ErrClosed), or
// the engine can no longer read or watch it. Rewound messages are not
// streamed, and a rewind does not take back messages already streamed.
func (s *Store) WatchMessages(ctx context.Context, sessionID string, afterID int64) iter.Seq2[Message, error] {
	const op = "watch messages"
	return func(yield func(Message, error) bool) {
		if afterID < 0 {
			yield(Message{}, opErr(op, sessionID, invalid("negative id bound")))
			return
		}
		if s.closed.Load() {
			yield(Message{}, opErr(op, sessionID, ErrClosed))
			return
		}
		// Subscribed before the first read: a commit after that read wakes
		// the wait below, however soon it comes.
		feed, err := s.drv.Changes(ctx)
		if err != nil {
			yield(Message{}, s.opErr(op, sessionID, err))
			return
		}
		defer feed.Close()
		mq := MessageQuery{AfterID: afterID, Limit: streamPage}
		for {
			for {
				page, err := s.Messages(ctx, sessionID, mq)
				if err != nil {
					if ctx.Err() == nil {
						yield(Message{}, err)
					}
					return
				}
				for _, m := range page {
					if !yield(m, nil) {
						return
					}
					mq.AfterID = m.ID
				}
				if len(page) < mq.Limit {
					break
				}
			}
			if err := feed.Wait(ctx); err != nil {
				if ctx.Err() == nil {
					yield(Message{}, s.opErr(op, sessionID, err))
				}
				return
			}
		}
	}
}
