package store

import (
	"context"
	"iter"
	"reflect"
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
		fail := func(err error) { yield(Message{}, err) }
		mq := MessageQuery{AfterID: afterID, Limit: streamPage}
		s.watch(ctx, op, sessionID, fail, func() bool {
			for {
				page, err := s.Messages(ctx, sessionID, mq)
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					return false
				}
				for _, m := range page {
					if !yield(m, nil) {
						return false
					}
					mq.AfterID = m.ID
				}
				if len(page) < mq.Limit {
					return true
				}
			}
		})
	}
}

// WatchRecentSessions streams a sidebar: the first page RecentSessions
// returns for q, at once and then again each time a commit — through
// this handle or any other — changes it (a new session, a new message
// moving a session up, a title, a flag). Pages that a commit left as
// they were are not repeated. It ends as WatchMessages does: cleanly when
// ctx ends or the caller stops ranging, with an error when q is invalid,
// the store is closed or the engine can no longer read or watch.
func (s *Store) WatchRecentSessions(ctx context.Context, q RecentQuery) iter.Seq2[RecentPage, error] {
	const op = "watch sessions"
	return func(yield func(RecentPage, error) bool) {
		fail := func(err error) { yield(RecentPage{}, err) }
		var last RecentPage
		first := true
		s.watch(ctx, op, "", fail, func() bool {
			page, err := s.RecentSessions(ctx, q)
			if err != nil {
				if ctx.Err() == nil {
					fail(err)
				}
				return false
			}
			if !first && reflect.DeepEqual(page, last) {
				return true
			}
			first, last = false, page
			return yield(page, nil)
		})
	}
}

// watch runs read at once and again after each commit the engine
// reports, until read returns false or ctx ends (no error), or the store
// closes or the engine can no longer watch (fail gets why). It subscribes
// before the first read, so a commit between a read and the wait after
// it still wakes the wait: none is missed.
func (s *Store) watch(ctx context.Context, op, sessionID string, fail func(error), read func() bool) {
	if s.closed.Load() {
		fail(opErr(op, sessionID, ErrClosed))
		return
	}
	feed, err := s.drv.Changes(ctx)
	if err != nil {
		fail(s.opErr(op, sessionID, err))
		return
	}
	defer feed.Close()
	for read() {
		if err := feed.Wait(ctx); err != nil {
			if ctx.Err() == nil {
				fail(s.opErr(op, sessionID, err))
			}
			return
		}
	}
}
