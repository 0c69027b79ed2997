package storetest

import (
	"slices"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

func ids(t *testing.T, s *Store) []string {
	t.Helper()
	list, err := s.ListSessions(t.Context(), SessionFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range list {
		out = append(out, x.ID)
	}
	slices.Sort(out)
	return out
}
