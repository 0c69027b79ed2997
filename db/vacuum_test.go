package db

import (
	"errors"
	"testing"
	"time"
)

// Vacuum meets another connection's write lock (in this process, so
// otherOpeners does not see it): the error is not ErrLocked.
func TestVacuum_AnotherConnectionsLockIsErrLocked(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "x")
	holdWriteLock(t, s.path, 8*time.Second)
	start := time.Now()
	_, err := s.Vacuum(t.Context())
	t.Logf("vacuum after %v: %v (ErrLocked=%v)", time.Since(start).Round(time.Millisecond), err, errors.Is(err, ErrLocked))
	if err != nil && !errors.Is(err, ErrLocked) {
		t.Errorf("vacuum under a held write lock: %v, not ErrLocked", err)
	}
}
