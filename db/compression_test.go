package db

import (
	"testing"
)

func lockFor(t testing.TB, s *Store, sessionID string) string {
	t.Helper()
	h := NewHolder("compressor")
	if _, got, err := s.AcquireCompressionLock(t.Context(), sessionID, h, 0); err != nil || !got {
		t.Fatalf("lock: %v %v", got, err)
	}
	return h
}

// continueAs continues parent's conversation in a new compression child
// (lock, publish, release), as a compressor would.
func continueAs(t testing.TB, s *Store, parent, child string) {
	t.Helper()
	h := lockFor(t, s, parent)
	if _, err := s.PublishCompressionChild(t.Context(), parent, Continuation{Holder: h, Child: NewSession{ID: child}}); err != nil {
		t.Fatalf("continue %s as %s: %v", parent, child, err)
	}
	if _, err := s.ReleaseCompressionLock(t.Context(), parent, h); err != nil {
		t.Fatal(err)
	}
}
