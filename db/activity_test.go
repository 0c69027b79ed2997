package db

import (
	"errors"
	"strings"
	"testing"
	"time"

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

func TestTouchActivity(t *testing.T) {
	s := openTestStore(t, Options{})
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

func TestTouchActivity_Refusals(t *testing.T) {
	s := openTestStore(t, Options{})
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

// A heartbeat must never stall a turn: with another process holding the
// write lock, a touch gives up after its own short patience (500 ms), not
// the 20 s a routine write waits.
func TestTouchActivity_ShortPatience(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "s1")
	holdWriteLock(t, s.Path(), 5*time.Second)
	for name, call := range map[string]func() error{
		"Touch": func() error { return s.TouchActivity(t.Context(), "s1", time.Now(), "x", "") },
		"Clear": func() error { return s.ClearActivityLabels(t.Context(), "s1") },
	} {
		start := time.Now()
		err := call()
		took := time.Since(start)
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("%s under a held lock = %v, want ErrLocked", name, err)
		}
		if took < 400*time.Millisecond || took > 2*time.Second {
			t.Errorf("%s gave up after %v, want about 500 ms (WritePatience is %v)", name, took, s.opts.WritePatience)
		}
	}
}

func TestOptions_ActivityPatience(t *testing.T) {
	d, err := Options{}.withDefaults()
	if err != nil || d.ActivityPatience != 500*time.Millisecond {
		t.Errorf("default ActivityPatience = %v (%v), want 500ms", d.ActivityPatience, err)
	}
	if _, err := (Options{ActivityPatience: -time.Second}).withDefaults(); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("negative ActivityPatience = %v, want ErrInvalidInput", err)
	}
	s := openTestStore(t, Options{ActivityPatience: 100 * time.Millisecond})
	newTestSession(t, s, "s1")
	holdWriteLock(t, s.Path(), 3*time.Second)
	start := time.Now()
	if err := s.TouchActivity(t.Context(), "s1", time.Time{}, "", ""); !errors.Is(err, ErrLocked) {
		t.Fatalf("touch = %v, want ErrLocked", err)
	}
	if took := time.Since(start); took > 400*time.Millisecond {
		t.Errorf("a 100 ms patience waited %v", took)
	}
}
