package db

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A file from before sessions knew their newest message is backfilled.
func TestOpen_BackfillsLastMessageTime(t *testing.T) {
	path := t.TempDir() + "/state.db"
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, NewSession{ID: "a"})
	tick()
	mustCreate(t, s, NewSession{ID: "b"})
	tick()
	appendTexts(t, s, "a", "later")
	s.Close()
	migrateDownTo(t, path, 7)
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := recentIDs(t, s, RecentQuery{}); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("after the migration: %v, want [a b]", got)
	}
}
