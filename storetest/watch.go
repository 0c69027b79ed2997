package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/sessiondb/sessiondb/store"
)

// watchBound is how long a watcher may take to see a commit made through
// another handle. The promise is tens of milliseconds (SQLite's poll,
// PostgreSQL's NOTIFY); the bound is loose because the test machine is
// shared, and still well under PostgreSQL's slow safety wake, so a
// missing NOTIFY fails it.
const watchBound = 2 * time.Second

// watched is what a watcher saw: each message with when it arrived, and
// the error that ended the stream (nil when it ended cleanly).
type watched struct {
	msg Message
	at  time.Time
	err error
}

// startWatch ranges over WatchMessages in a goroutine, sending what it
// sees on the returned channel, which closes when the stream ends.
func startWatch(ctx context.Context, s *Store, sessionID string, afterID int64) <-chan watched {
	out := make(chan watched, 1024)
	go func() {
		defer close(out)
		for m, err := range s.WatchMessages(ctx, sessionID, afterID) {
			out <- watched{msg: m, at: time.Now(), err: err}
			if err != nil {
				return
			}
		}
	}()
	return out
}

// next is the watcher's next message, failing the test when it takes
// longer than bound or the stream ends or errs.
func next(t *testing.T, ch <-chan watched, bound time.Duration) watched {
	t.Helper()
	select {
	case w, ok := <-ch:
		if !ok {
			t.Fatal("the watch ended early")
		}
		if w.err != nil {
			t.Fatalf("the watch ended with %v", w.err)
		}
		return w
	case <-time.After(bound):
		t.Fatalf("no message within %v", bound)
	}
	return watched{}
}

// reopen is the engine's second handle on s, failing without one.
func reopen(t *testing.T, e Engine, s *Store) *Store {
	t.Helper()
	if e.Reopen == nil {
		t.Fatal("storetest: the engine needs Reopen for the watch tests")
	}
	return e.Reopen(t, s)
}

// A watcher sees every message another handle (another process, another
// replica) appends — one at a time and in batches — exactly once, in id
// order, each within watchBound of its commit; and the messages already
// there first.
func testWatchMessages_SeesAnotherHandlesAppends(t *testing.T, e Engine) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := e.Open(t, Options{})
	other := reopen(t, e, s)
	newTestSession(t, s, "w")
	first, err := s.AppendMessage(ctx, "w", NewMessage{Role: RoleUser, Content: "before the watch"})
	if err != nil {
		t.Fatal(err)
	}
	ch := startWatch(ctx, s, "w", 0)
	if got := next(t, ch, watchBound); got.msg.ID != first {
		t.Fatalf("first message streamed %d, want the one already there, %d", got.msg.ID, first)
	}
	var want []int64
	var worst time.Duration
	for i := range 20 {
		batch := []NewMessage{{Role: RoleAssistant, Content: fmt.Sprintf("reply %d", i)}}
		if i%4 == 3 { // every fourth commit a batch of three
			batch = append(batch, NewMessage{Role: RoleUser, Content: fmt.Sprintf("follow-up %d", i)},
				NewMessage{Role: RoleAssistant, Content: fmt.Sprintf("answer %d", i)})
		}
		ids, err := other.AppendMessages(ctx, "w", batch)
		if err != nil {
			t.Fatalf("append %d through the other handle: %v", i, err)
		}
		committed := time.Now()
		want = append(want, ids...)
		for j, id := range ids {
			got := next(t, ch, watchBound)
			if got.msg.ID != id || got.msg.Content != batch[j].Content {
				t.Fatalf("streamed %d %q, want %d %q", got.msg.ID, got.msg.Content, id, batch[j].Content)
			}
			worst = max(worst, got.at.Sub(committed))
		}
	}
	t.Logf("slowest wake after another handle's commit: %v", worst)
	// Nothing more: no message twice.
	select {
	case w := <-ch:
		t.Fatalf("streamed more than was appended: %+v", w)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	for w := range ch {
		if w.err != nil {
			t.Fatalf("cancel ended the watch with %v, want a clean end", w.err)
		}
	}
	all, err := s.Messages(t.Context(), "w", MessageQuery{AfterID: first})
	if err != nil {
		t.Fatal(err)
	}
	var stored []int64
	for _, m := range all {
		stored = append(stored, m.ID)
	}
	if diff := cmp.Diff(stored, want); diff != "" {
		t.Errorf("ids appended vs stored (-stored +appended):\n%s", diff)
	}
}

// Many writers through both handles at once: the watcher still sees each
// message exactly once, in id order.
func testWatchMessages_ConcurrentWritersExactlyOnce(t *testing.T, e Engine) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := e.Open(t, Options{})
	other := reopen(t, e, s)
	newTestSession(t, s, "w")
	ch := startWatch(ctx, s, "w", 0)
	const writers, each = 4, 15
	errs := make(chan error, writers)
	for i := range writers {
		h := s
		if i%2 == 1 {
			h = other
		}
		go func() {
			for j := range each {
				if _, err := h.AppendMessage(ctx, "w", NewMessage{Role: RoleUser, Content: fmt.Sprintf("w%d m%d", i, j)}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	var last int64
	for range writers * each {
		w := next(t, ch, watchBound)
		if w.msg.ID <= last || seen[w.msg.Content] {
			t.Fatalf("streamed %d %q after %d (seen before: %v)", w.msg.ID, w.msg.Content, last, seen[w.msg.Content])
		}
		last, seen[w.msg.Content] = w.msg.ID, true
	}
	select {
	case w := <-ch:
		t.Fatalf("streamed more than was appended: %+v", w)
	case <-time.After(100 * time.Millisecond):
	}
}

// A watcher started at an id sees only the messages after it: those
// already there first, then new ones; a session's other neighbours never.
func testWatchMessages_StartsAfterID(t *testing.T, e Engine) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := e.Open(t, Options{})
	newTestSession(t, s, "w")
	newTestSession(t, s, "elsewhere")
	ids, err := s.AppendMessages(ctx, "w", []NewMessage{
		{Role: RoleUser, Content: "one"}, {Role: RoleAssistant, Content: "two"}, {Role: RoleUser, Content: "three"}})
	if err != nil {
		t.Fatal(err)
	}
	ch := startWatch(ctx, s, "w", ids[1])
	if got := next(t, ch, watchBound); got.msg.Content != "three" {
		t.Fatalf("first streamed %q, want three (after id %d)", got.msg.Content, ids[1])
	}
	if _, err := s.AppendMessage(ctx, "elsewhere", NewMessage{Role: RoleUser, Content: "not this session"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(ctx, "w", NewMessage{Role: RoleAssistant, Content: "four"}); err != nil {
		t.Fatal(err)
	}
	if got := next(t, ch, watchBound); got.msg.Content != "four" {
		t.Fatalf("then streamed %q, want four", got.msg.Content)
	}
	// Started after the last message: nothing until a new one.
	tail := startWatch(ctx, s, "w", ids[2]+1000)
	select {
	case w := <-tail:
		t.Fatalf("a watch after every id streamed %+v", w)
	case <-time.After(100 * time.Millisecond):
	}
}

// Canceling the context ends the stream promptly and without an error,
// as does breaking out of the range; the store stays usable.
func testWatchMessages_CancelEndsCleanly(t *testing.T, e Engine) {
	s := e.Open(t, Options{})
	newTestSession(t, s, "w")
	ctx, cancel := context.WithCancel(t.Context())
	ch := startWatch(ctx, s, "w", 0)
	time.Sleep(50 * time.Millisecond) // let it reach its wait
	canceled := time.Now()
	cancel()
	select {
	case w, ok := <-ch:
		if ok {
			t.Fatalf("after cancel the watch streamed %+v, want its end", w)
		}
	case <-time.After(watchBound):
		t.Fatal("cancel did not end the watch")
	}
	t.Logf("ended %v after cancel", time.Since(canceled))
	if _, err := s.AppendMessage(t.Context(), "w", NewMessage{Role: RoleUser, Content: "after"}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for m, err := range s.WatchMessages(t.Context(), "w", 0) {
		if err != nil || m.Content != "after" {
			t.Fatalf("watch again: %+v %v", m, err)
		}
		n++
		break // ends the stream from the caller's side
	}
	if n != 1 {
		t.Fatalf("the second watch streamed %d messages before break, want 1", n)
	}
}

// A store closed under a watcher ends its stream with ErrClosed; a watch
// of a closed store, of an unknown session or from a negative id yields
// its error at once.
func testWatchMessages_EndsWithAnError(t *testing.T, e Engine) {
	s := e.Open(t, Options{})
	newTestSession(t, s, "w")
	ch := startWatch(t.Context(), s, "w", 0)
	time.Sleep(50 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case w, ok := <-ch:
		if !ok || !errors.Is(w.err, ErrClosed) {
			t.Fatalf("closing the store under a watch ended it with %+v (open: %v), want ErrClosed", w, ok)
		}
	case <-time.After(watchBound):
		t.Fatal("closing the store did not end the watch")
	}

	s2 := e.Open(t, Options{})
	newTestSession(t, s2, "w")
	for _, c := range []struct {
		name    string
		session string
		after   int64
		want    error
	}{
		{"unknown session", "nobody", 0, ErrNotFound},
		{"negative id", "w", -1, ErrInvalidInput},
	} {
		var got []error
		for _, err := range s2.WatchMessages(t.Context(), c.session, c.after) {
			got = append(got, err)
		}
		if len(got) != 1 || !errors.Is(got[0], c.want) {
			t.Errorf("%s: the watch yielded %v, want one %v", c.name, got, c.want)
		}
	}
	var got []error
	for _, err := range s.WatchMessages(t.Context(), "w", 0) {
		got = append(got, err)
	}
	if len(got) != 1 || !errors.Is(got[0], ErrClosed) {
		t.Errorf("a watch of a closed store yielded %v, want one ErrClosed", got)
	}
}

// A sidebar's watch yields the first page at once, then a new page each
// time another handle's commit changes it — a new session, a message
// moving a session up, a title — and nothing for a commit that leaves it
// as it was.
func testWatchRecentSessions_SeesAnotherHandlesChanges(t *testing.T, e Engine) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := e.Open(t, Options{})
	other := reopen(t, e, s)
	newTestSession(t, s, "a")
	type seen struct {
		ids    []string
		titles []string
		err    error
	}
	pages := make(chan seen, 64)
	go func() {
		defer close(pages)
		for p, err := range s.WatchRecentSessions(ctx, RecentQuery{}) {
			var v seen
			for _, r := range p.Sessions {
				v.ids, v.titles = append(v.ids, r.ID), append(v.titles, r.Title)
			}
			v.err = err
			pages <- v
			if err != nil {
				return
			}
		}
	}()
	nextPage := func(what string, want []string) seen {
		t.Helper()
		select {
		case p, ok := <-pages:
			if !ok || p.err != nil {
				t.Fatalf("%s: the watch ended (%v)", what, p.err)
			}
			if diff := cmp.Diff(want, p.ids); diff != "" {
				t.Fatalf("%s: page ids (-want +got):\n%s", what, diff)
			}
			return p
		case <-time.After(watchBound):
			t.Fatalf("%s: no page within %v", what, watchBound)
		}
		return seen{}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case p := <-pages:
			t.Fatalf("%s: an unchanged sidebar yielded again: %+v", what, p)
		case <-time.After(150 * time.Millisecond):
		}
	}
	nextPage("at once", []string{"a"})
	quiet("before any commit")
	time.Sleep(5 * time.Millisecond) // b starts later than a, so it lists first
	newTestSession(t, other, "b")
	nextPage("a new session", []string{"b", "a"})
	time.Sleep(5 * time.Millisecond)
	if _, err := other.AppendMessage(ctx, "a", NewMessage{Role: RoleUser, Content: "up you go"}); err != nil {
		t.Fatal(err)
	}
	nextPage("a message moves a up", []string{"a", "b"})
	if err := other.SetTitle(ctx, "b", "renamed"); err != nil {
		t.Fatal(err)
	}
	if p := nextPage("a title", []string{"a", "b"}); p.titles[1] != "renamed" {
		t.Fatalf("titles after SetTitle: %q", p.titles)
	}
	if err := other.SetMeta(ctx, "unrelated", "value"); err != nil {
		t.Fatal(err)
	}
	quiet("a commit that changes no session")
}
