package db

import (
	"testing"

	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/storetest"
)

// TestConformance runs the domain's conformance suite on the SQLite
// engine, each test on a fresh file.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, o store.Options) *store.Store {
		return openTestStore(t, Options{WritePatience: o.WritePatience, TranscriptPatience: o.TranscriptPatience,
			ActivityPatience: o.ActivityPatience, Logger: o.Logger}).Store
	})
}
