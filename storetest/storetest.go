// Package storetest is the conformance suite of the store's domain: every
// behaviour a caller relies on — sessions, messages, titles, lineage and
// compression, leases, handoffs, usage, rewind, flags, delete, export and
// import, prune, session lists — written once and run against each engine
// (the SQLite engine's tests and the PostgreSQL engine's call Run).
//
// The suite speaks only package store's API. Where engines legitimately
// differ (a relevance score, which text a substring matches), it asserts
// what both must hold: the hit set, the order on planted data.
package storetest

import (
	"testing"

	"github.com/sessiondb/sessiondb/store"
)

// Opener opens a fresh, empty store with opts for one test; the store is
// closed when the test ends (the suite may close it earlier itself).
type Opener func(t *testing.T, opts store.Options) *store.Store

// Engine is what the suite needs of an engine.
type Engine struct {
	// Open opens a fresh store (see Opener).
	Open Opener
	// Exec runs one SQL statement on the database behind s, for setups the
	// API cannot make on purpose: a session backdated by a month, an
	// expired cooldown, a link that makes a cycle. The suite writes SQL
	// that every engine speaks, with $1-style parameters.
	Exec func(t testing.TB, s *store.Store, query string, args ...any)
	// HoldIndexing is for an engine that indexes new messages for search
	// in the background (SQLite): it keeps s from indexing until release,
	// which indexes every message still waiting and returns how many there
	// were, so a test searches the same rows both waiting and indexed.
	// nil: the engine indexes as it writes.
	HoldIndexing func(t testing.TB, s *store.Store) (release func() int)
	// Reopen opens a second, independent handle on the store behind s (a
	// second Open of the same file, of the same schema): what another
	// process or replica would hold. It is closed when the test ends.
	Reopen func(t *testing.T, s *store.Store) *store.Store
}

// Run runs the whole suite, each test a subtest.
func Run(t *testing.T, e Engine) {
	if e.Open == nil || e.Exec == nil {
		t.Fatal("storetest: the engine needs both Open and Exec")
	}
	for _, c := range suite {
		t.Run(c.name, func(t *testing.T) { c.test(t, e) })
	}
}

// newTestSession creates a session for a test.
func newTestSession(t testing.TB, s *store.Store, id string) store.Session {
	t.Helper()
	sess, err := s.CreateSession(t.Context(), store.NewSession{ID: id, Source: "test"})
	if err != nil {
		t.Fatalf("CreateSession(%q): %v", id, err)
	}
	return sess
}

// counts is how many sessions and messages a store holds.
type counts struct{ Sessions, Messages int64 }

// rowCounts counts every session and message of s, through the API.
func rowCounts(t testing.TB, s *store.Store) counts {
	t.Helper()
	var c counts
	for sess, err := range s.AllSessions(t.Context()) {
		if err != nil {
			t.Fatalf("AllSessions: %v", err)
		}
		c.Sessions++
		c.Messages += sess.MessageCount
	}
	return c
}
