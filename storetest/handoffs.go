package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignoreHandoffTime = cmpopts.IgnoreFields(HandoffState{}, "UpdatedAt")

func handoffOf(t *testing.T, s *Store, id string) HandoffState {
	t.Helper()
	h, err := s.Handoff(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func testHandoff_Lifecycle(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	if h := handoffOf(t, s, "s1"); h != (HandoffState{}) {
		t.Fatalf("fresh session handoff = %+v, want none", h)
	}
	before := time.Now().Add(-time.Second)
	steps := []struct {
		name string
		do   func() error
		want HandoffState
	}{
		{"Request", func() error { return s.RequestHandoff(ctx, "s1", "telegram") },
			HandoffState{State: HandoffPending, Platform: "telegram"}},
		{"Claim", func() error { return claimed(s.ClaimHandoff(ctx, "s1", "w1")) },
			HandoffState{State: HandoffRunning, Platform: "telegram", Holder: "w1"}},
		{"Fail", func() error { return s.FailHandoff(ctx, "s1", "w1", "chat not found") },
			HandoffState{State: HandoffFailed, Platform: "telegram", Holder: "w1", Error: "chat not found"}},
		{"RequestAfterFailure", func() error { return s.RequestHandoff(ctx, "s1", "slack") },
			HandoffState{State: HandoffPending, Platform: "slack"}},
		{"ClaimAgain", func() error { return claimed(s.ClaimHandoff(ctx, "s1", "w2")) },
			HandoffState{State: HandoffRunning, Platform: "slack", Holder: "w2"}},
		{"Complete", func() error { return s.CompleteHandoff(ctx, "s1", "w2") },
			HandoffState{State: HandoffCompleted, Platform: "slack", Holder: "w2"}},
		{"RequestAfterCompletion", func() error { return s.RequestHandoff(ctx, "s1", "web") },
			HandoffState{State: HandoffPending, Platform: "web"}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got := handoffOf(t, s, "s1")
		if diff := cmp.Diff(st.want, got, ignoreHandoffTime); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
		if got.UpdatedAt.Before(before) || got.UpdatedAt.After(time.Now()) {
			t.Errorf("%s: UpdatedAt %v is not the transition time", st.name, got.UpdatedAt)
		}
	}
}

// claimed turns a lost claim into an error, for step tables.
func claimed(ok bool, err error) error {
	if err == nil && !ok {
		return errors.New("claim returned false")
	}
	return err
}

// Every transition from every state: the ones the machine does not allow
// fail with ErrConflict (a claim reports false) and change nothing.
func testHandoff_TransitionsOutOfTurn(t *testing.T, open Opener) {
	type step = func(ctx context.Context, s *Store, id string) error
	reach := map[HandoffStatus]step{
		HandoffNone:    func(context.Context, *Store, string) error { return nil },
		HandoffPending: func(ctx context.Context, s *Store, id string) error { return s.RequestHandoff(ctx, id, "p") },
	}
	reach[HandoffRunning] = func(ctx context.Context, s *Store, id string) error {
		if err := reach[HandoffPending](ctx, s, id); err != nil {
			return err
		}
		return claimed(s.ClaimHandoff(ctx, id, "w1"))
	}
	reach[HandoffCompleted] = func(ctx context.Context, s *Store, id string) error {
		if err := reach[HandoffRunning](ctx, s, id); err != nil {
			return err
		}
		return s.CompleteHandoff(ctx, id, "w1")
	}
	reach[HandoffFailed] = func(ctx context.Context, s *Store, id string) error {
		if err := reach[HandoffRunning](ctx, s, id); err != nil {
			return err
		}
		return s.FailHandoff(ctx, id, "w1", "x")
	}
	ops := map[string]step{
		"Request":          func(ctx context.Context, s *Store, id string) error { return s.RequestHandoff(ctx, id, "q") },
		"Claim":            func(ctx context.Context, s *Store, id string) error { return claimed(s.ClaimHandoff(ctx, id, "w9")) },
		"CompleteByHolder": func(ctx context.Context, s *Store, id string) error { return s.CompleteHandoff(ctx, id, "w1") },
		"CompleteByOther":  func(ctx context.Context, s *Store, id string) error { return s.CompleteHandoff(ctx, id, "w9") },
		"FailByHolder":     func(ctx context.Context, s *Store, id string) error { return s.FailHandoff(ctx, id, "w1", "e") },
		"FailByOther":      func(ctx context.Context, s *Store, id string) error { return s.FailHandoff(ctx, id, "w9", "e") },
	}
	allowed := map[HandoffStatus][]string{
		HandoffNone:      {"Request"},
		HandoffPending:   {"Claim"},
		HandoffRunning:   {"CompleteByHolder", "FailByHolder"},
		HandoffCompleted: {"Request"},
		HandoffFailed:    {"Request"},
	}
	s := open(t, Options{})
	for from, setup := range reach {
		for name, op := range ops {
			label := string(from)
			if from == HandoffNone {
				label = "none"
			}
			t.Run(label+"/"+name, func(t *testing.T) {
				ctx := t.Context()
				id := t.Name()
				newTestSession(t, s, id)
				if err := setup(ctx, s, id); err != nil {
					t.Fatal(err)
				}
				before := handoffOf(t, s, id)
				err := op(ctx, s, id)
				if slices.Contains(allowed[from], name) {
					if err != nil {
						t.Fatalf("allowed transition failed: %v", err)
					}
					return
				}
				if name == "Claim" {
					if err == nil || err.Error() != "claim returned false" {
						t.Fatalf("claim out of turn = %v, want false and no error", err)
					}
				} else if !errors.Is(err, ErrConflict) {
					t.Fatalf("transition out of turn = %v, want ErrConflict", err)
				}
				if after := handoffOf(t, s, id); after != before {
					t.Errorf("a refused transition changed the handoff: %+v -> %+v", before, after)
				}
			})
		}
	}
}

func testHandoff_Refusals(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"RequestUnknown", func() error { return s.RequestHandoff(ctx, "ghost", "p") }, ErrNotFound},
		{"ClaimUnknown", func() error { _, err := s.ClaimHandoff(ctx, "ghost", "w"); return err }, ErrNotFound},
		{"CompleteUnknown", func() error { return s.CompleteHandoff(ctx, "ghost", "w") }, ErrNotFound},
		{"FailUnknown", func() error { return s.FailHandoff(ctx, "ghost", "w", "e") }, ErrNotFound},
		{"GetUnknown", func() error { _, err := s.Handoff(ctx, "ghost"); return err }, ErrNotFound},
		{"EmptyPlatform", func() error { return s.RequestHandoff(ctx, "s1", "") }, ErrInvalidInput},
		{"ControlInPlatform", func() error { return s.RequestHandoff(ctx, "s1", "a\nb") }, ErrInvalidInput},
		{"EmptyID", func() error { return s.RequestHandoff(ctx, "", "p") }, ErrInvalidInput},
		{"EmptyHolder", func() error { _, err := s.ClaimHandoff(ctx, "s1", ""); return err }, ErrInvalidInput},
		{"EmptyHolderOnComplete", func() error { return s.CompleteHandoff(ctx, "s1", "") }, ErrInvalidInput},
		{"InvalidUTF8Error", func() error { return s.FailHandoff(ctx, "s1", "w", "\xff") }, ErrInvalidInput},
		{"ZeroReclaimAge", func() error { _, err := s.ReclaimStaleHandoffs(ctx, 0); return err }, ErrInvalidInput},
		{"NegativeReclaimAge", func() error { _, err := s.ReclaimStaleHandoffs(ctx, -time.Second); return err }, ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if h := handoffOf(t, s, "s1"); h != (HandoffState{}) {
				t.Errorf("a refused call changed the handoff: %+v", h)
			}
		})
	}
}

func testReclaimStaleHandoffs(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	for _, id := range []string{"stale", "pending", "done"} {
		newTestSession(t, s, id)
		if err := s.RequestHandoff(ctx, id, "p"); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"stale", "done"} {
		if ok, err := s.ClaimHandoff(ctx, id, "w1"); err != nil || !ok {
			t.Fatalf("claim %s: %v %v", id, ok, err)
		}
	}
	if err := s.CompleteHandoff(ctx, "done", "w1"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ReclaimStaleHandoffs(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("reclaim of fresh handoffs = %d, %v; want 0", n, err)
	}
	time.Sleep(30 * time.Millisecond)
	n, err := s.ReclaimStaleHandoffs(ctx, 10*time.Millisecond)
	if err != nil || n != 1 {
		t.Fatalf("ReclaimStaleHandoffs = %d, %v; want 1 (only the running one)", n, err)
	}
	if diff := cmp.Diff(HandoffState{State: HandoffPending, Platform: "p"}, handoffOf(t, s, "stale"), ignoreHandoffTime); diff != "" {
		t.Errorf("reclaimed handoff (-want +got):\n%s", diff)
	}
	if h := handoffOf(t, s, "done"); h.State != HandoffCompleted {
		t.Errorf("a completed handoff was touched: %+v", h)
	}
	// The presumed-dead worker comes back: its handoff is gone.
	if err := s.CompleteHandoff(ctx, "stale", "w1"); !errors.Is(err, ErrConflict) {
		t.Errorf("complete after reclaim = %v, want ErrConflict", err)
	}
	if ok, err := s.ClaimHandoff(ctx, "stale", "w2"); err != nil || !ok {
		t.Errorf("claim after reclaim = %v, %v; want true", ok, err)
	}
}

// Eight workers claim one pending handoff: exactly one gets it.
func testClaimHandoff_Race(t *testing.T, open Opener) {
	s := open(t, Options{})
	newTestSession(t, s, "s1")
	if err := s.RequestHandoff(t.Context(), "s1", "telegram"); err != nil {
		t.Fatal(err)
	}
	const n = 8
	won := make([]bool, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			ok, err := s.ClaimHandoff(t.Context(), "s1", string(rune('a'+i)))
			if err != nil {
				t.Errorf("worker %d: %v", i, err)
			}
			won[i] = ok
		})
	}
	close(start)
	wg.Wait()
	winners := ""
	for i, ok := range won {
		if ok {
			winners += string(rune('a' + i))
		}
	}
	if len(winners) != 1 {
		t.Fatalf("winners %q, want exactly one", winners)
	}
	if h := handoffOf(t, s, "s1"); h.State != HandoffRunning || h.Holder != winners {
		t.Errorf("handoff %+v, want running under the winner %q", h, winners)
	}
}
