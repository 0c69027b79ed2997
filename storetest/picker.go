package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	. "github.com/sessiondb/sessiondb/store"
)

// pickerOf reads one session's PickerStatus.
func pickerOf(t *testing.T, s *Store, id string) PickerStatus {
	t.Helper()
	st, err := s.PickerStatuses(t.Context(), []string{id})
	if err != nil || len(st) != 1 {
		t.Fatalf("PickerStatuses(%s): %v %v", id, st, err)
	}
	return st[0]
}

// pickerShape is what a test compares of a status: the times are the
// store's clock.
type pickerShape struct {
	Execution  Execution
	Turn       bool // a turn id is shown
	Result     TurnOutcome
	Attention  AttentionKind
	RequestID  string
	ResultTurn bool // the result names the turn that was finished
}

func shapeOf(st PickerStatus, turn string) pickerShape {
	p := pickerShape{Execution: st.Execution, Turn: st.TurnID != "", Attention: st.Attention.Kind, RequestID: st.Attention.RequestID}
	if st.TurnID != "" && st.TurnID != turn {
		p.Turn = false
	}
	if st.LastResult != nil {
		p.Result, p.ResultTurn = st.LastResult.Outcome, st.LastResult.TurnID == turn
	}
	return p
}

// testPickerStatus_FollowsTheTurn: unknown before any turn; running under
// a bare lease (attention unknown) and under a begun turn (attention none,
// then the open request); idle with the result once finished, before and
// after the release; a new holder's lease hides the old result at once;
// a lease released without a finish (a crash) reads unknown, never idle.
func testPickerStatus_FollowsTheTurn(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	var turn string
	steps := []struct {
		name string
		do   func() error
		want pickerShape
	}{
		{"never observed", func() error { return nil }, pickerShape{Execution: ExecutionUnknown}},
		{"bare lease", func() error { _, _, err := s.AcquireTurnLease(ctx, "s", "a", 0); return err },
			pickerShape{Execution: ExecutionRunning, Attention: AttentionUnknown}},
		{"turn begun", func() (err error) { turn, err = s.BeginTurn(ctx, "s", "a"); return err },
			pickerShape{Execution: ExecutionRunning, Turn: true, Attention: AttentionNone}},
		{"question asked", func() error { return s.OpenAttention(ctx, "s", "a", turn, AttentionQuestion, "q1") },
			pickerShape{Execution: ExecutionRunning, Turn: true, Attention: AttentionQuestion, RequestID: "q1"}},
		{"question answered", func() error { return s.ResolveAttention(ctx, "s", "a", turn, "q1") },
			pickerShape{Execution: ExecutionRunning, Turn: true, Attention: AttentionNone}},
		{"turn finished", func() error { return s.FinishTurn(ctx, "s", "a", turn, TurnComplete) },
			pickerShape{Execution: ExecutionIdle, Result: TurnComplete, ResultTurn: true}},
		{"lease released", func() error { _, err := s.ReleaseTurnLease(ctx, "s", "a"); return err },
			pickerShape{Execution: ExecutionIdle, Result: TurnComplete, ResultTurn: true}},
		{"another holder's lease", func() error { _, _, err := s.AcquireTurnLease(ctx, "s", "b", 0); return err },
			pickerShape{Execution: ExecutionRunning, Attention: AttentionUnknown}},
		{"released unfinished (a crash)", func() error { _, err := s.ReleaseTurnLease(ctx, "s", "b"); return err },
			pickerShape{Execution: ExecutionUnknown}},
		{"a finished error", func() error {
			if _, _, err := s.AcquireTurnLease(ctx, "s", "c", 0); err != nil {
				return err
			}
			var err error
			if turn, err = s.BeginTurn(ctx, "s", "c"); err != nil {
				return err
			}
			return s.FinishTurn(ctx, "s", "c", turn, TurnError)
		}, pickerShape{Execution: ExecutionIdle, Result: TurnError, ResultTurn: true}},
		{"a new turn by the same holder", func() (err error) { turn, err = s.BeginTurn(ctx, "s", "c"); return err },
			pickerShape{Execution: ExecutionRunning, Turn: true, Attention: AttentionNone}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got := pickerOf(t, s, "s")
		if diff := cmp.Diff(st.want, shapeOf(got, turn)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
		if got.RootID != "s" || !got.Found {
			t.Errorf("%s: root %q found %v", st.name, got.RootID, got.Found)
		}
	}
}

// testPickerStatus_ExpiredLeaseReadsUnknown: a holder that dies mid-turn
// leaves a lease that expires; the conversation then reads unknown, not
// running and not the result of an older turn.
func testPickerStatus_ExpiredLeaseReadsUnknown(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	if _, _, err := s.AcquireTurnLease(ctx, "s", "a", 0); err != nil {
		t.Fatal(err)
	}
	turn, err := s.BeginTurn(ctx, "s", "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishTurn(ctx, "s", "a", turn, TurnComplete); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseTurnLease(ctx, "s", "a"); err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	acquired := time.Now()
	if _, _, err := s.AcquireTurnLease(ctx, "s", "dies", ttl); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginTurn(ctx, "s", "dies"); err != nil {
		t.Fatal(err)
	}
	// Mid-turn reads "running" only while the lease lives: on a loaded
	// machine the calls above can outlast it, and then there is nothing
	// to check before it expires.
	if got := pickerOf(t, s, "s"); time.Since(acquired) < ttl && got.Execution != ExecutionRunning {
		t.Fatalf("mid-turn: %+v", got)
	}
	time.Sleep(time.Until(acquired.Add(2 * ttl)))
	if got := pickerOf(t, s, "s"); got.Execution != ExecutionUnknown || got.LastResult != nil || got.TurnID != "" {
		t.Errorf("after the lease expired: %+v", got)
	}
}

// testPickerStatus_Refusals: only the lease's holder reports, only on the
// current turn, a turn finishes once; bad input is ErrInvalidInput; an
// unknown session is a status with Found false beside the others.
func testPickerStatus_Refusals(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	if _, err := s.BeginTurn(ctx, "s", "a"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("begin without the lease: %v", err)
	}
	if _, _, err := s.AcquireTurnLease(ctx, "s", "a", 0); err != nil {
		t.Fatal(err)
	}
	old, _ := s.BeginTurn(ctx, "s", "a")
	turn, err := s.BeginTurn(ctx, "s", "a")
	if err != nil || turn == old {
		t.Fatalf("second begin: %q %v", turn, err)
	}
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"finish by another holder", func() error { return s.FinishTurn(ctx, "s", "b", turn, TurnComplete) }, ErrLeaseLost},
		{"finish a replaced turn", func() error { return s.FinishTurn(ctx, "s", "a", old, TurnComplete) }, ErrConflict},
		{"outcome not known", func() error { return s.FinishTurn(ctx, "s", "a", turn, "done") }, ErrInvalidInput},
		{"attention of kind none", func() error { return s.OpenAttention(ctx, "s", "a", turn, AttentionNone, "r") }, ErrInvalidInput},
		{"attention without a request id", func() error { return s.OpenAttention(ctx, "s", "a", turn, AttentionApproval, "") }, ErrInvalidInput},
		{"resolve a request never opened", func() error { return s.ResolveAttention(ctx, "s", "a", turn, "r9") }, ErrConflict},
		{"finish", func() error { return s.FinishTurn(ctx, "s", "a", turn, TurnInterrupted) }, nil},
		{"finish twice", func() error { return s.FinishTurn(ctx, "s", "a", turn, TurnComplete) }, ErrConflict},
		{"attention after the finish", func() error { return s.OpenAttention(ctx, "s", "a", turn, AttentionApproval, "r") }, ErrConflict},
		{"unknown session", func() error { _, err := s.BeginTurn(ctx, "nope", "a"); return err }, ErrNotFound},
	}
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	st, err := s.PickerStatuses(ctx, []string{"nope", "s"})
	if err != nil {
		t.Fatal(err)
	}
	want := []PickerStatus{{SessionID: "nope"}, {SessionID: "s", Found: true, RootID: "s", Execution: ExecutionIdle,
		LastResult: &TurnResult{TurnID: turn, Outcome: TurnInterrupted}}}
	if diff := cmp.Diff(want, st, cmpopts.IgnoreFields(TurnResult{}, "At")); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if st[1].LastResult.At.IsZero() {
		t.Error("the result has no time")
	}
}

// testPickerStatus_SharedByTheLineage: the status is the conversation's:
// a compression continuation reads what its root reads, a turn begun on
// the child is the root's, and a delegate (its own conversation) does not.
func testPickerStatus_SharedByTheLineage(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	AppendTexts(t, s, "p", "a")
	h := LockFor(t, s, "p")
	w, _ := s.ActiveWatermark(ctx, "p")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	MustCreate(t, s, NewSession{ID: "d", Source: "test", ParentID: "c", Kind: ChildDelegate})
	if _, _, err := s.AcquireTurnLease(ctx, "c", "a", 0); err != nil {
		t.Fatal(err)
	}
	turn, err := s.BeginTurn(ctx, "c", "a")
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.PickerStatuses(ctx, []string{"p", "c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range st[:2] {
		if x.RootID != "p" || x.Execution != ExecutionRunning || x.TurnID != turn {
			t.Errorf("%s: %+v", x.SessionID, x)
		}
	}
	if st[2].RootID != "d" || st[2].Execution != ExecutionUnknown {
		t.Errorf("delegate: %+v", st[2])
	}
}
