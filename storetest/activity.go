package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// activity is the part of a session the activity calls write.
type activity struct {
	At                      time.Time
	Description, Provenance string
}

func activityOf(t *testing.T, s *Store, id string) activity {
	t.Helper()
	sess, err := s.Session(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return activity{sess.LastActivityAt, sess.ActivityDescription, sess.ActivityProvenance}
}

func testTouchActivity(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	if got := activityOf(t, s, "s1"); got != (activity{}) {
		t.Fatalf("fresh session activity = %+v, want none", got)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	steps := []struct {
		name       string
		touch      func() error
		want       activity
		wantChange bool
	}{
		{"First", func() error { return s.TouchActivity(ctx, "s1", at(0), "running tests", "tool:shell") },
			activity{at(0), "running tests", "tool:shell"}, true},
		{"OlderChangesNothing", func() error { return s.TouchActivity(ctx, "s1", at(-time.Minute), "stale", "old") },
			activity{at(0), "running tests", "tool:shell"}, false},
		{"OneMillisecondOlder", func() error { return s.TouchActivity(ctx, "s1", at(-time.Millisecond), "stale", "") },
			activity{at(0), "running tests", "tool:shell"}, false},
		{"SameTimeNewLabel", func() error { return s.TouchActivity(ctx, "s1", at(0), "reading files", "") },
			activity{at(0), "reading files", "tool:shell"}, true},
		{"NewerWithoutLabelsKeepsThem", func() error { return s.TouchActivity(ctx, "s1", at(time.Second), "", "") },
			activity{at(time.Second), "reading files", "tool:shell"}, true},
		{"NewerWithLabels", func() error { return s.TouchActivity(ctx, "s1", at(2*time.Second), "thinking", "model") },
			activity{at(2 * time.Second), "thinking", "model"}, true},
		{"Clear", func() error { return s.ClearActivityLabels(ctx, "s1") },
			activity{at(2 * time.Second), "", ""}, true},
		{"OlderAfterClear", func() error { return s.TouchActivity(ctx, "s1", at(time.Second), "late", "late") },
			activity{at(2 * time.Second), "", ""}, false},
	}
	for _, st := range steps {
		if err := st.touch(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(st.want, activityOf(t, s, "s1")); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
	}

	// A zero time means now.
	before := time.Now().Truncate(time.Millisecond)
	if err := s.TouchActivity(ctx, "s1", time.Time{}, "", ""); err != nil {
		t.Fatal(err)
	}
	if got := activityOf(t, s, "s1").At; got.Before(before) || got.After(time.Now()) {
		t.Errorf("a zero-time touch recorded %v, want now", got)
	}
}

func testTouchActivity_Refusals(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	now := time.Now()
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"UnknownSession", func() error { return s.TouchActivity(ctx, "ghost", now, "", "") }, ErrNotFound},
		{"ClearUnknownSession", func() error { return s.ClearActivityLabels(ctx, "ghost") }, ErrNotFound},
		{"EmptyID", func() error { return s.TouchActivity(ctx, "", now, "", "") }, ErrInvalidInput},
		{"ClearEmptyID", func() error { return s.ClearActivityLabels(ctx, "") }, ErrInvalidInput},
		{"InvalidUTF8Description", func() error { return s.TouchActivity(ctx, "s1", now, "\xff", "") }, ErrInvalidInput},
		{"InvalidUTF8Provenance", func() error { return s.TouchActivity(ctx, "s1", now, "", "\xc3\x28") }, ErrInvalidInput},
		{"LongDescription", func() error { return s.TouchActivity(ctx, "s1", now, strings.Repeat("d", 1025), "") }, ErrInvalidInput},
		{"Before1970", func() error { return s.TouchActivity(ctx, "s1", time.Unix(-10, 0), "", "") }, ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if got := activityOf(t, s, "s1"); got != (activity{}) {
				t.Errorf("a refused call wrote activity %+v", got)
			}
		})
	}
}
