package storetest

// WholeSession is the read every durability check makes (kill -9, power
// loss, torture, restarts, repair, full disks): every message of a session,
// however many. Messages returns at most 100,000 rows a call, and a check
// that took such a window for the session proved nothing past its end — it
// reported acknowledged messages "present 0 times" once a quiet machine's
// writers appended more than that (issue 38).

import (
	"context"
	"errors"
	"fmt"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

// ErrNotWholeSession is what ReadWholeSession and CheckWholeSession return
// (wrapped) for a read that cannot be the whole session: its active rows
// disagree with the session's MessageCount. Either the read was a window,
// or the counter disagrees with the rows it counts; both fail a check.
var ErrNotWholeSession = errors.New("the read is not the whole session")

// wholeSessionPage is the rows WholeSession reads per page: each page is a
// read of its own, so a long session is never held in one snapshot.
const wholeSessionPage = 10_000

// ReadWholeSession reads every message of a session (active and compacted,
// oldest first, as Messages shows them) through the AllMessages stream, and
// checks the read against the session's counter: the active rows it read
// must be at least MessageCount as it was before the read and at most as it
// was after (appends may run meanwhile). A read that fell short — a window,
// not the whole session, or a counter that disagrees with its rows — is an
// error matching ErrNotWholeSession, returned with the rows it did read.
func ReadWholeSession(ctx context.Context, s *Store, sessionID string) ([]Message, error) {
	before, err := s.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var msgs []Message
	for m, err := range s.AllMessages(ctx, sessionID, MessageQuery{Limit: wholeSessionPage}) {
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
	after, err := s.Session(ctx, sessionID)
	if err != nil {
		return msgs, err
	}
	return msgs, CheckWholeSession(msgs, before.MessageCount, after.MessageCount)
}

// CheckWholeSession reports whether msgs can be the whole of a session
// whose MessageCount was before when the read began and after when it
// ended: the active rows among them must lie between the two.
func CheckWholeSession(msgs []Message, before, after int64) error {
	active := int64(0)
	for _, m := range msgs {
		if m.State == StateActive {
			active++
		}
	}
	if active < before || active > after {
		want := fmt.Sprint(before)
		if after != before {
			want = fmt.Sprintf("%d to %d", before, after)
		}
		return fmt.Errorf("read %d active messages (%d rows) where the session's MessageCount is %s: %w "+
			"(a window, or a counter wrong), and a check on it proves nothing", active, len(msgs), want, ErrNotWholeSession)
	}
	return nil
}

// WholeSession is ReadWholeSession for a test: it stops the test at a read
// error and fails it, loudly, when the read is not the whole session.
func WholeSession(t testing.TB, s *Store, sessionID string) []Message {
	t.Helper()
	msgs, err := ReadWholeSession(t.Context(), s, sessionID)
	if err != nil {
		t.Fatalf("read the whole session %s: %v", sessionID, err)
	}
	return msgs
}
