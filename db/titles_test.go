package db

import (
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/storetest"
)

// A file from before titles were scoped per user keeps its titles and
// gains the per-user rule on open.
func TestOpen_MigratesTitlesToPerUserUniqueness(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustCreate(t, s.Store, NewSession{ID: "ann-1", UserID: "ann", Title: "New chat"})
	storetest.MustCreate(t, s.Store, NewSession{ID: "bob-1", UserID: "bob"})
	s.Close()
	migrateDownTo(t, path, 6) // back to the store-wide title index
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, _ := storetest.TitleOf(t, s.Store, "ann-1"); got != "New chat" {
		t.Errorf("title after migration %q, want New chat", got)
	}
	if err := s.SetTitle(t.Context(), "bob-1", "New chat"); err != nil {
		t.Errorf("a second user's New chat after migration: %v", err)
	}
}
