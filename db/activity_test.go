package db

import (
	"errors"
	"testing"
	"time"
)

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
	// A loose bound (a loaded machine took 1 s): below the lock's 3 s hold,
	// so the touch gave up on its own patience, not when the lock went.
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a 100 ms patience waited %v", took)
	}
}
