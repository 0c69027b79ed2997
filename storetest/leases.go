package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"
)

func testLeases_BadInput(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s1")
	cases := []struct {
		name    string
		call    func() error
		wantErr error
	}{
		{"empty holder", func() error { _, _, err := s.AcquireCompressionLock(ctx, "s1", "", 0); return err }, ErrInvalidInput},
		{"negative ttl", func() error { _, _, err := s.AcquireTurnLease(ctx, "s1", "h", -time.Second); return err }, ErrInvalidInput},
		{"invalid utf-8 holder", func() error { _, _, err := s.AcquireTurnLease(ctx, "s1", "h\xff", 0); return err }, ErrInvalidInput},
		{"empty session id", func() error { _, _, err := s.AcquireCompressionLock(ctx, "", "h", 0); return err }, ErrInvalidInput},
		{"unknown session (lock)", func() error { _, _, err := s.AcquireCompressionLock(ctx, "nope", "h", 0); return err }, ErrNotFound},
		{"unknown session (lease)", func() error { _, _, err := s.AcquireTurnLease(ctx, "nope", "h", 0); return err }, ErrNotFound},
		{"refresh nothing held", func() error { _, err := s.RefreshTurnLease(ctx, "s1", "h", 0); return err }, ErrLeaseLost},
	}
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, c.wantErr) {
			t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
		}
	}
}

func testLeases_ExpiredIsReclaimedAndOwnerCanRevive(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s1")
	if _, got, err := s.AcquireTurnLease(ctx, "s1", "worker-a", 30*time.Millisecond); !got || err != nil {
		t.Fatal(got, err)
	}
	time.Sleep(60 * time.Millisecond)
	// The owner may revive its own expired lease (refresh checks the holder only).
	if _, err := s.RefreshTurnLease(ctx, "s1", "worker-a", 30*time.Millisecond); err != nil {
		t.Fatalf("owner revives expired lease: %v", err)
	}
	time.Sleep(60 * time.Millisecond)
	// Once expired, anyone may take it — even from an unstructured holder.
	l, got, err := s.AcquireTurnLease(ctx, "s1", "worker-b", 0)
	if !got || err != nil || l.Holder != "worker-b" {
		t.Fatalf("reclaim expired: %+v %v %v", l, got, err)
	}
	if _, err := s.RefreshTurnLease(ctx, "s1", "worker-a", 0); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("old owner refresh after takeover: %v, want ErrLeaseLost", err)
	}
}

// TestLeases_OneWinnerAmongGoroutines: 8 goroutines race for the same
// compression lock and the same turn lease; exactly one wins each.
func testLeases_OneWinnerAmongGoroutines(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s1")
	for _, kind := range []string{"compression lock", "turn lease"} {
		var wins sync.Map
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 8 {
			wg.Go(func() {
				<-start
				holder := fmt.Sprintf("g%d", i)
				var got bool
				var err error
				if kind == "turn lease" {
					_, got, err = s.AcquireTurnLease(ctx, "s1", holder, 0)
				} else {
					_, got, err = s.AcquireCompressionLock(ctx, "s1", holder, 0)
				}
				if err != nil {
					t.Error(err)
				}
				if got {
					wins.Store(holder, true)
				}
			})
		}
		close(start)
		wg.Wait()
		n := 0
		wins.Range(func(any, any) bool { n++; return true })
		if n != 1 {
			t.Errorf("%s: %d winners, want exactly 1", kind, n)
		}
	}
}

func testAwaitTurnLease(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	if _, _, err := s.AcquireTurnLease(ctx, "s", "a", 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	l, err := s.AwaitTurnLease(ctx, "s", "b", 0, 20*time.Millisecond)
	if err != nil || l.Holder != "b" {
		t.Fatalf("await: %+v %v", l, err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("got the lease after %v, before a's expired", waited)
	}
	short, cancel := context.WithTimeout(ctx, 60*time.Millisecond)
	defer cancel()
	if _, err := s.AwaitTurnLease(short, "s", "c", 0, 20*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("await past the context: %v, want DeadlineExceeded", err)
	}
}

// TestAppendMessagesUnderLease: a turn's appends check the turn lease in
// their own transaction; a worker whose turn was taken over writes nothing.
func testAppendMessagesUnderLease(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	msg := []NewMessage{{Role: RoleUser, Content: "turn"}}
	if _, err := s.AppendMessagesUnderLease(ctx, "s", "w1", msg); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("without a lease: %v, want ErrLeaseLost", err)
	}
	if _, _, err := s.AcquireTurnLease(ctx, "s", "w1", 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessagesUnderLease(ctx, "s", "w1", msg); err != nil {
		t.Fatalf("under its lease: %v", err)
	}
	// Expired but no one took it: renewed by the append.
	time.Sleep(50 * time.Millisecond)
	if _, err := s.AppendMessagesUnderLease(ctx, "s", "w1", msg); err != nil {
		t.Fatalf("under its expired, untaken lease: %v", err)
	}
	if l, _ := s.TurnLease(ctx, "s"); !l.Live(time.Now()) || l.Holder != "w1" {
		t.Errorf("the lease was not renewed: %+v", l)
	}
	// Taken over — w1's lease expired and w2 acquired it, with no
	// release: the old worker writes nothing.
	newTestSession(t, s, "s2")
	if _, got, err := s.AcquireTurnLease(ctx, "s2", "w1", 30*time.Millisecond); err != nil || !got {
		t.Fatalf("w1 acquire: %v %v", got, err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, got, err := s.AcquireTurnLease(ctx, "s2", "w2", 0); err != nil || !got {
		t.Fatalf("w2 takes the expired lease: %v %v", got, err)
	}
	if _, err := s.AppendMessagesUnderLease(ctx, "s2", "w1", msg); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("after a takeover: %v, want ErrLeaseLost", err)
	}
	if sess, _ := s.Session(ctx, "s2"); sess.MessageCount != 0 {
		t.Errorf("the taken-over worker wrote %d messages", sess.MessageCount)
	}
	if sess, _ := s.Session(ctx, "s"); sess.MessageCount != 2 {
		t.Errorf("message_count %d, want 2", sess.MessageCount)
	}
	if _, err := s.AppendMessagesUnderLease(ctx, "s", "", msg); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty holder: %v", err)
	}
}

func testCompressionLock_Lifecycle(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s1")
	a, b := NewHolder("a"), NewHolder("b")

	l, got, err := s.AcquireCompressionLock(ctx, "s1", a, 0)
	if err != nil || !got {
		t.Fatalf("acquire: got=%v err=%v", got, err)
	}
	if d := l.ExpiresAt.Sub(l.AcquiredAt); d != DefaultLeaseTTL {
		t.Errorf("default TTL = %v, want %v", d, DefaultLeaseTTL)
	}
	// Another holder is refused and told who holds it.
	cur, got, err := s.AcquireCompressionLock(ctx, "s1", b, 0)
	if err != nil || got || cur.Holder != a {
		t.Fatalf("second holder: got=%v holder=%q err=%v", got, cur.Holder, err)
	}
	// Refresh by the owner extends; by another is ErrLeaseLost.
	if _, err := s.RefreshCompressionLock(ctx, "s1", b, time.Hour); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("refresh by another holder: %v, want ErrLeaseLost", err)
	}
	r, err := s.RefreshCompressionLock(ctx, "s1", a, time.Hour)
	if err != nil || r.ExpiresAt.Before(time.Now().Add(50*time.Minute)) {
		t.Fatalf("refresh: %v, expires %v", err, r.ExpiresAt)
	}
	if seen, err := s.CompressionLock(ctx, "s1"); err != nil || seen.Holder != a || !seen.Live(time.Now()) {
		t.Errorf("inspect: %+v %v", seen, err)
	}
	// Release by another changes nothing; by the owner frees it.
	if ok, err := s.ReleaseCompressionLock(ctx, "s1", b); ok || err != nil {
		t.Errorf("release by another: %v %v", ok, err)
	}
	if ok, err := s.ReleaseCompressionLock(ctx, "s1", a); !ok || err != nil {
		t.Errorf("release: %v %v", ok, err)
	}
	if seen, err := s.CompressionLock(ctx, "s1"); err != nil || seen.Live(time.Now()) {
		t.Errorf("after release: %+v %v", seen, err)
	}
	if _, got, err := s.AcquireCompressionLock(ctx, "s1", b, 0); err != nil || !got {
		t.Errorf("acquire after release: %v %v", got, err)
	}
}

func testTurnLease_KeyedByLineageRoot(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "root")
	continueAs(t, s, "root", "cont")
	continueAs(t, s, "cont", "cont2")
	MustCreate(t, s, NewSession{ID: "branch", ParentID: "cont", Kind: ChildBranch})

	l, got, err := s.AcquireTurnLease(ctx, "cont2", "a", 0)
	if !got || err != nil || l.Key != "root" {
		t.Fatalf("acquire on continuation: %+v %v %v (key should be the root)", l, got, err)
	}
	if l, got, _ := s.AcquireTurnLease(ctx, "root", "b", 0); got || l.Holder != "a" {
		t.Errorf("root's lease should be held by a: %+v %v", l, got)
	}
	if _, got, _ := s.AcquireTurnLease(ctx, "branch", "b", 0); !got {
		t.Errorf("a branch is its own conversation")
	}
	if seen, err := s.TurnLease(ctx, "cont"); err != nil || seen.Holder != "a" {
		t.Errorf("inspect through the middle of the chain: %+v %v", seen, err)
	}
	if ok, err := s.ReleaseTurnLease(ctx, "root", "a"); !ok || err != nil {
		t.Errorf("release through the root: %v %v", ok, err)
	}
}

// SessionConversationRoot stops after 100 steps: in a conversation of
// more than 101 sessions, the tip and an early session resolve different
// "roots", so two holders get the turn lease of one conversation.
func testTurnLease_OneRootForALongConversation(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c000")
	for i := 1; i <= 150; i++ {
		continueAs(t, s, fmt.Sprintf("c%03d", i-1), fmt.Sprintf("c%03d", i))
	}
	l1, got1, err1 := s.AcquireTurnLease(ctx, "c150", "a", 0)
	l2, got2, err2 := s.AcquireTurnLease(ctx, "c010", "b", 0)
	if err1 != nil || err2 != nil || l1.Key != "c000" || l2.Key != "c000" {
		t.Errorf("keys %q (%v) and %q (%v), want both c000", l1.Key, err1, l2.Key, err2)
	}
	if got1 && got2 {
		t.Errorf("two holders hold the turn lease of one conversation")
	}
}
