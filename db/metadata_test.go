package db

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestCompressionFailureCooldown(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	newTestSession(t, s, "s1")
	holder := NewHolder("compressor")
	if err := s.CompressionFailed(ctx, "s1", time.Hour, "summary model timed out"); err != nil {
		t.Fatal(err)
	}
	// A second failure with a shorter cooldown keeps the later deadline.
	if err := s.CompressionFailed(ctx, "s1", time.Minute, "provider 529"); err != nil {
		t.Fatal(err)
	}
	sess, _ := s.Session(ctx, "s1")
	if left := time.Until(sess.CompressionRetryAfter); left < 50*time.Minute || sess.CompressionError != "provider 529" {
		t.Errorf("cooldown = %v left, error %q; want about an hour and the latest error", left, sess.CompressionError)
	}
	if _, got, err := s.AcquireCompressionLock(ctx, "s1", holder, 0); !errors.Is(err, ErrCoolingDown) || got {
		t.Fatalf("lock during the cooldown = %v, %v; want ErrCoolingDown", got, err)
	}
	if lock, _ := s.CompressionLock(ctx, "s1"); lock.Holder != "" {
		t.Errorf("a lock was taken during the cooldown: %+v", lock)
	}
	// Once the time has passed (moved here by hand), compression may run.
	err := s.write(ctx, "expire cooldown", "s1", time.Second, func(ctx2 context.Context, tx genDBTX) error {
		_, err := tx.ExecContext(ctx2, "UPDATE sessions SET compression_retry_after = ? WHERE id = 's1'", now()-1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := s.AcquireCompressionLock(ctx, "s1", holder, 0); err != nil || !got {
		t.Errorf("lock after the cooldown = %v, %v", got, err)
	}
	if sess, _ := s.Session(ctx, "s1"); sess.CompressionError != "provider 529" {
		t.Errorf("the error was not kept: %q", sess.CompressionError)
	}
	if err := s.ClearCompressionFailure(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if sess, _ := s.Session(ctx, "s1"); !sess.CompressionRetryAfter.IsZero() || sess.CompressionError != "" {
		t.Errorf("after clearing: %v %q", sess.CompressionRetryAfter, sess.CompressionError)
	}
	if err := s.CompressionFailed(ctx, "s1", 0, "x"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("zero cooldown = %v, want ErrInvalidInput", err)
	}
	if err := s.CompressionFailed(ctx, "ghost", time.Hour, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session = %v, want ErrNotFound", err)
	}
}

func TestReopenSession(t *testing.T) {
	ctx := t.Context()
	s := bulkStore(t, []bulkSpec{
		{id: "ended", source: "cli", messages: 1, ended: true},
		{id: "live", source: "cli"},
		{id: "root", source: "cli", messages: 1},
		{id: "tip", parent: "root", kind: ChildCompression},
	})
	reopened, err := s.ReopenSession(ctx, "ended")
	if err != nil || !reopened {
		t.Fatalf("ReopenSession(ended) = %v, %v", reopened, err)
	}
	if got, _ := s.Session(ctx, "ended"); got.Ended() || got.EndReason != "" {
		t.Errorf("reopened session still ended: %v %q", got.EndedAt, got.EndReason)
	}
	if _, err := s.AppendMessage(ctx, "ended", NewMessage{Role: RoleUser, Content: "back again"}); err != nil {
		t.Errorf("append after reopen: %v", err)
	}
	if again, err := s.ReopenSession(ctx, "live"); err != nil || again {
		t.Errorf("ReopenSession(live) = %v, %v; want false, nil", again, err)
	}
	if _, err := s.ReopenSession(ctx, "root"); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("ReopenSession(compressed parent) = %v, want ErrSessionClosed", err)
	}
	if got, _ := s.Session(ctx, "root"); got.EndReason != "compression" {
		t.Errorf("the refused reopen changed the parent: %q", got.EndReason)
	}
	if _, err := s.ReopenSession(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReopenSession(ghost) = %v, want ErrNotFound", err)
	}
}
