package pg

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// With WatchByPolling (PgBouncer in transaction mode) a watcher sees
// another handle's appends by polling, without LISTEN: each within a
// loose bound of its commit, once, in order.
func TestWatchMessages_ByPolling(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := openTestStore(t, Options{WatchByPolling: true})
	other, got := watchFromAnotherHandle(ctx, t, s)
	appendAndExpectStreamed(ctx, t, other, got, 5, 2*time.Second, "by polling")
	if n := listeners(t, s); n != 0 {
		t.Errorf("%d sessions LISTEN on the store's channel; WatchByPolling wants none", n)
	}
	// The count sees a LISTEN when there is one: the other handle's watch.
	go func() {
		for range other.WatchMessages(ctx, "w", 0) {
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	for listeners(t, s) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the default handle's watch never LISTENed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A watcher LISTENing sees another handle's appends at their commit's
// NOTIFY, which an append batch sends after its COMMIT in a transaction
// of its own (appender.commitAndNotify): each well within the safety
// wake (listenSafetyWake), which is all a lost NOTIFY would leave.
func TestWatchMessages_NotifiedAfterTheAppendsCommit(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := openTestStore(t, Options{})
	other, got := watchFromAnotherHandle(ctx, t, s)
	awaitListening(t, s)
	appendAndExpectStreamed(ctx, t, other, got, 5, listenSafetyWake/5, "no NOTIFY reached the watcher")
}

// watchFromAnotherHandle opens a second handle on s's schema (closed
// when the test ends), creates the session "w" and watches it through s:
// got yields what the watch streams.
func watchFromAnotherHandle(ctx context.Context, t *testing.T, s *Store) (other *Store, got <-chan store.Message) {
	t.Helper()
	other, err := Open(ctx, testDSN(t), Options{Schema: s.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "w", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	streamed := make(chan store.Message, 16)
	go func() {
		for m, err := range s.WatchMessages(ctx, "w", 0) {
			if err != nil {
				t.Errorf("watch: %v", err)
				return
			}
			streamed <- m
		}
	}()
	return other, streamed
}

// appendAndExpectStreamed appends n messages to "w" through other, each
// to be streamed on got, with its id, within bound of its append.
func appendAndExpectStreamed(ctx context.Context, t *testing.T, other *Store, got <-chan store.Message, n int, bound time.Duration, when string) {
	t.Helper()
	for i := range n {
		id, err := other.AppendMessage(ctx, "w", store.NewMessage{Role: store.RoleUser, Content: "m"})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			if m.ID != id {
				t.Fatalf("append %d: streamed id %d, want %d", i, m.ID, id)
			}
		case <-time.After(bound):
			t.Fatalf("append %d: not streamed within %v (%s)", i, bound, when)
		}
	}
}

// awaitListening waits (5 s at most) until s's watch LISTENs.
func awaitListening(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for listeners(t, s) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the watch never LISTENed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listeners counts the server's sessions listening on s's channel
// (pg_stat_activity shows a LISTEN as the session's last query).
func listeners(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	err := s.eng.pool.QueryRow(t.Context(),
		"SELECT count(*) FROM pg_stat_activity WHERE query = $1", "LISTEN "+`"`+changeChannel(s.Schema())+`"`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The channel is the schema's, hashed when the schema's name is too long
// for an identifier beside the prefix: distinct schemas, distinct
// channels, none longer than 63 bytes.
func TestChangeChannel(t *testing.T) {
	long := string(make([]byte, 63))
	for _, c := range []struct{ a, b string }{{"t_1", "t_2"}, {long + "a", long + "b"}} {
		ca, cb := changeChannel(c.a), changeChannel(c.b)
		if ca == cb || len(ca) > 63 || len(cb) > 63 {
			t.Errorf("channels %q %q for schemas of %d bytes", ca, cb, len(c.a))
		}
	}
}

// A LISTEN connection the server drops (a restart, a proxy, an operator's
// pg_terminate_backend) costs no message: the watchers poll, say so in
// the log, and still see another handle's appends within the bound.
func TestWatchMessages_ListenLostFallsBackToPolling(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var logged syncBuffer
	s := openTestStore(t, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	other, got := watchFromAnotherHandle(ctx, t, s)
	awaitListening(t, s)
	var killed bool
	if err := other.eng.pool.QueryRow(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1",
		"LISTEN "+`"`+changeChannel(s.Schema())+`"`).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminate the LISTEN connection: %v %v", killed, err)
	}
	appendAndExpectStreamed(ctx, t, other, got, 3, 2*time.Second, "after the LISTEN connection was lost")
	if !strings.Contains(logged.String(), "cannot LISTEN for live updates; watchers poll") {
		t.Errorf("no warning of the fallback in the log: %q", logged.String())
	}
}

// syncBuffer is a bytes.Buffer a logger may write from another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	// +checklocks:mu
	b bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
