package store

import (
	"context"
	"iter"
	"math"

	"github.com/sessiondb/sessiondb/store/driver"
)

// streamPage is how many rows a stream reads per snapshot: large enough
// that paging costs little, small enough that memory stays constant and
// no read holds a snapshot for long.
const streamPage = 500

// AllSessions streams every session, earliest start first (ties by id), a
// page per read, so memory stays constant however many there are. Each
// page is a snapshot of its own: a session created while the stream runs
// is included when it sorts after the last page read. The stream ends at
// the first error, which it yields.
func (s *Store) AllSessions(ctx context.Context) iter.Seq2[Session, error] {
	return func(yield func(Session, error) bool) {
		for r, err := range s.sessionRows(ctx, "list sessions") {
			if err != nil {
				yield(Session{}, err)
				return
			}
			if !yield(sessionFromRow(r), nil) {
				return
			}
		}
	}
}

// sessionRows streams every session row in (started_at, id) order.
func (s *Store) sessionRows(ctx context.Context, op string) iter.Seq2[driver.Session, error] {
	return func(yield func(driver.Session, error) bool) {
		// From the very first start time: import accepts any int64, and a
		// session before the cursor's floor would silently be left out.
		cursor := driver.SessionExportPageParams{AfterStarted: math.MinInt64, RowLimit: streamPage}
		for {
			var rows []driver.Session
			err := s.snapshot(ctx, op, "", func(q driver.Executor) (err error) {
				rows, err = q.SessionExportPage(ctx, cursor)
				return err
			})
			if err != nil {
				yield(driver.Session{}, err)
				return
			}
			for _, r := range rows {
				if err := ctx.Err(); err != nil {
					yield(driver.Session{}, opErr(op, "", err))
					return
				}
				if !yield(r, nil) {
					return
				}
			}
			if len(rows) < streamPage {
				return
			}
			last := rows[len(rows)-1]
			cursor.AfterStarted, cursor.AfterID = last.StartedAt, last.ID
		}
	}
}

// AllMessages streams a session's messages as Messages would return them
// for mq (its bounds, order and IncludeRewound), without Messages' cap:
// it reads mq.Limit rows per page (default 1000, at most Messages' cap of
// 100,000), each page in a read of its own, until the session has no more. An unknown session yields
// ErrNotFound. The stream ends at the first error, which it yields.
func (s *Store) AllMessages(ctx context.Context, sessionID string, mq MessageQuery) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		switch {
		case mq.Limit == 0:
			mq.Limit = 1000
		case mq.Limit > maxMessagesLimit:
			// Messages returns at most this many: a larger page size
			// would take its first full page for the last one.
			mq.Limit = maxMessagesLimit
		}
		for {
			page, err := s.Messages(ctx, sessionID, mq)
			if err != nil {
				yield(Message{}, err)
				return
			}
			for _, m := range page {
				if !yield(m, nil) {
					return
				}
			}
			if len(page) < mq.Limit {
				return
			}
			if last := page[len(page)-1].ID; mq.NewestFirst {
				mq.BeforeID = last
			} else {
				mq.AfterID = last
			}
		}
	}
}
