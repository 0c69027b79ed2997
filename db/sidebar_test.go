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

// A conversation that compression continued is one row, its tip; delegate
// and tool children show only when asked for.
func TestRecentSessions_Conversations(t *testing.T) {
	s := openTestStore(t, Options{})
	mustCreate(t, s, NewSession{ID: "c1", Title: "Fix the build"})
	appendTexts(t, s, "c1", "first")
	tick()
	continueAs(t, s, "c1", "c2")
	tick()
	mustCreate(t, s, NewSession{ID: "helper", ParentID: "c2", Kind: ChildDelegate})
	tick()
	mustCreate(t, s, NewSession{ID: "other"})
	tick()
	mustCreate(t, s, NewSession{ID: "fork", ParentID: "other", Kind: ChildBranch})

	for _, tt := range []struct {
		q    RecentQuery
		want []string
	}{
		{RecentQuery{}, []string{"fork", "other", "c2", "c1"}},
		{RecentQuery{Conversations: true}, []string{"fork", "other", "c2"}},
		{RecentQuery{Conversations: true, IncludeChildren: true}, []string{"fork", "other", "helper", "c2"}},
	} {
		if diff := cmp.Diff(tt.want, recentIDs(t, s, tt.q)); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tt.q, diff)
		}
	}
	page, _ := s.RecentSessions(t.Context(), RecentQuery{Conversations: true})
	if tip := page.Sessions[2]; tip.Title != "Fix the build #2" || tip.Kind != ChildCompression || tip.ParentID != "c1" {
		t.Errorf("the conversation's row = %+v, want its tip", tip)
	}
}
