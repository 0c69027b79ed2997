package db

import (
	"context"
	"testing"

	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/storetest"
)

// TestConformance runs the domain's conformance suite on the SQLite
// engine, each test on a fresh file that Verify must find healthy when
// the test is done (every index holding exactly its messages).
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, o store.Options) *store.Store {
		s := openTestStore(t, Options{WritePatience: o.WritePatience, TranscriptPatience: o.TranscriptPatience,
			ActivityPatience: o.ActivityPatience, Logger: o.Logger})
		t.Cleanup(func() {
			if t.Failed() {
				return
			}
			if r, err := Verify(context.Background(), s.Path()); err != nil || r.Health != HealthVerified {
				t.Errorf("Verify after the test: %s %v %v", r.Health, r.Details, err)
			}
		})
		return s.Store
	})
}
