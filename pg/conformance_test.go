package pg

import (
	"testing"

	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/storetest"
)

// TestConformance runs the domain's conformance suite on PostgreSQL, each
// test in a fresh schema of the test server (so tests may run in
// parallel); without a server it skips, or fails under CI=true.
func TestConformance(t *testing.T) {
	testDSN(t)
	storetest.Run(t, func(t *testing.T, o store.Options) *store.Store {
		return openTestStore(t, Options{WritePatience: o.WritePatience, TranscriptPatience: o.TranscriptPatience,
			ActivityPatience: o.ActivityPatience, Logger: o.Logger}).Store
	})
}
