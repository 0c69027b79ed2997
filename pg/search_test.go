package pg

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessiondb/sessiondb/store"
)

// TestSearch_RelevanceRanksTheNewestWindow: relevance ranks the newest
// rankWindow matches, best first, then lists the older ones newest first,
// and paging through that order visits every hit once.
func TestSearch_RelevanceRanksTheNewestWindow(t *testing.T) {
	defer func(w int) { rankWindow = w }(rankWindow)
	rankWindow = 3
	s := openTestStore(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "r", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	// Oldest first: how many times each message says alpha.
	counts := []int{5, 1, 4, 1, 3, 2}
	var batch []store.NewMessage
	for _, n := range counts {
		batch = append(batch, store.NewMessage{Role: store.RoleUser, Content: strings.TrimSpace(strings.Repeat("alpha ", n)) + " and filler words here"})
	}
	ids, err := s.AppendMessages(ctx, "r", batch)
	if err != nil {
		t.Fatal(err)
	}
	// The window is the newest three (3, 1 and 2 alphas): best first; then
	// the others (1, 4, 5 alphas: unranked), newest first.
	want := []int64{ids[4], ids[5], ids[3], ids[2], ids[1], ids[0]}
	hits, err := s.Search(ctx, "alpha", store.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, hitIDs(hits)); diff != "" {
		t.Errorf("relevance order (-want +got):\n%s", diff)
	}
	var paged []int64
	for offset := 0; offset < len(counts)+2; offset += 2 {
		page, err := s.Search(ctx, "alpha", store.SearchOptions{Limit: 2, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, hitIDs(page)...)
	}
	if diff := cmp.Diff(want, paged); diff != "" {
		t.Errorf("pages of 2 (-want +got):\n%s", diff)
	}
}

func hitIDs(hits []store.SearchHit) []int64 {
	var out []int64
	for _, h := range hits {
		out = append(out, h.MessageID)
	}
	return out
}

// TestSearch_WindowFoundPastTheFirstSpan: the ranked window is the newest
// rankWindow matches however far back they lie (windowStart widens its
// span until the window is full): here the word is in the oldest messages
// only, far past the first span, and in every message past it.
func TestSearch_WindowFoundPastTheFirstSpan(t *testing.T) {
	defer func(w int) { rankWindow = w }(rankWindow)
	rankWindow = 2
	s := openTestStore(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "r", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	// Oldest first: three matches (2, 1, 3 betas), then 200 messages without
	// the word: the first span (16 windows, 32 ids) holds none.
	batch := []store.NewMessage{
		{Role: store.RoleUser, Content: "beta beta and filler"},
		{Role: store.RoleUser, Content: "beta and filler words"},
		{Role: store.RoleUser, Content: "beta beta beta filler"},
	}
	for range 200 {
		batch = append(batch, store.NewMessage{Role: store.RoleUser, Content: "nothing to find here"})
	}
	ids, err := s.AppendMessages(ctx, "r", batch)
	if err != nil {
		t.Fatal(err)
	}
	// The window is the newest two matches (3 betas, then 1), then the
	// oldest, past it.
	want := []int64{ids[2], ids[1], ids[0]}
	hits, err := s.Search(ctx, "beta", store.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, hitIDs(hits)); diff != "" {
		t.Errorf("relevance order (-want +got):\n%s", diff)
	}
}
