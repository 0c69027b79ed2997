package db

import (
	"testing"

	"github.com/sessiondb/sessiondb/storetest"

	"github.com/google/go-cmp/cmp"
)

// A file from before sessions knew their newest message is backfilled.
func TestOpen_BackfillsLastMessageTime(t *testing.T) {
	path := t.TempDir() + "/state.db"
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustCreate(t, s.Store, NewSession{ID: "a"})
	storetest.Tick()
	storetest.MustCreate(t, s.Store, NewSession{ID: "b"})
	storetest.Tick()
	storetest.AppendTexts(t, s.Store, "a", "later")
	s.Close()
	migrateDownTo(t, path, 7)
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := storetest.RecentIDs(t, s.Store, RecentQuery{}); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("after the migration: %v, want [a b]", got)
	}
}
