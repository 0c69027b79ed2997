package storetest

import (
	"errors"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"
)

// testCompressionFallbackStreak: compressions that fall back are counted
// in a row; the limit-th starts the failure cooldown (no compression lock
// until it passes, the later deadline kept) and restarts the count; a
// compression that works (ClearCompressionFailure) ends a streak.
func testCompressionFallbackStreak(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	newTestSession(t, s, "s")
	fellBack := func(wantStreak int64, wantCooling bool) {
		t.Helper()
		n, cooling, err := s.CompressionFellBack(ctx, "s", 3, time.Hour, "summariser fell back to truncation")
		if err != nil || n != wantStreak || cooling != wantCooling {
			t.Fatalf("CompressionFellBack = %d, %v, %v; want %d, %v", n, cooling, err, wantStreak, wantCooling)
		}
		if sess, err := s.Session(ctx, "s"); err != nil || sess.CompressionFallbackStreak != wantStreak {
			t.Fatalf("Session.CompressionFallbackStreak = %d, %v; want %d", sess.CompressionFallbackStreak, err, wantStreak)
		}
	}
	holder := NewHolder("compressor")
	fellBack(1, false)
	fellBack(2, false)
	if err := s.ClearCompressionFailure(ctx, "s"); err != nil { // a compression that worked
		t.Fatal(err)
	}
	fellBack(1, false)
	fellBack(2, false)
	if _, got, err := s.AcquireCompressionLock(ctx, "s", holder, 0); err != nil || !got {
		t.Fatalf("lock below the limit = %v, %v", got, err)
	}
	if _, err := s.ReleaseCompressionLock(ctx, "s", holder); err != nil {
		t.Fatal(err)
	}
	fellBack(0, true)
	sess, _ := s.Session(ctx, "s")
	if left := time.Until(sess.CompressionRetryAfter); left < 50*time.Minute || sess.CompressionError != "summariser fell back to truncation" {
		t.Errorf("cooldown = %v left, error %q; want about an hour and the fallback's error", left, sess.CompressionError)
	}
	if _, got, err := s.AcquireCompressionLock(ctx, "s", holder, 0); !errors.Is(err, ErrCoolingDown) || got {
		t.Errorf("lock during the cooldown = %v, %v; want ErrCoolingDown", got, err)
	}
	// A longer failure cooldown stands; a streak's shorter one does not
	// bring it forward.
	if err := s.CompressionFailed(ctx, "s", 5*time.Hour, "provider down"); err != nil {
		t.Fatal(err)
	}
	fellBack(1, false)
	fellBack(2, false)
	fellBack(0, true)
	if sess, _ := s.Session(ctx, "s"); time.Until(sess.CompressionRetryAfter) < 4*time.Hour {
		t.Errorf("the streak brought the cooldown forward to %v", sess.CompressionRetryAfter)
	}
	if _, _, err := s.CompressionFellBack(ctx, "s", 0, time.Hour, "x"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("limit 0 = %v, want ErrInvalidInput", err)
	}
	if _, _, err := s.CompressionFellBack(ctx, "s", 3, 0, "x"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("cooldown 0 = %v, want ErrInvalidInput", err)
	}
	if _, _, err := s.CompressionFellBack(ctx, "ghost", 3, time.Hour, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session = %v, want ErrNotFound", err)
	}
}
