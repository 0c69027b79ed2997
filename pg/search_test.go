package pg

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
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
// rankWindow matches however far back they lie (rankedWindow reads older
// spans until the window is full): here the word is in the oldest
// messages only, far past the first span, and in none after them.
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

// TestSearch_WindowIsTheNewestMatchesOnEveryRoute: whatever route
// rankedWindow takes to read the ranked window (the first
// span full; matches in it too sparse to fill a window anywhere; sparse
// but enough further back, found by their density; none in the first
// span, found by the bounded count; a word rare among the newest ids and
// common long before them), the window is the newest rankWindow matches
// and every older match follows it, newest first.
func TestSearch_WindowIsTheNewestMatchesOnEveryRoute(t *testing.T) {
	defer func(w int) { rankWindow = w }(rankWindow)
	rankWindow = 4 // the first span: windowSpan*4 = 64 ids
	s := openTestStore(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "w", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	// 600 messages, oldest first; each word's messages by index.
	const total = 600
	words := map[string]func(i int) bool{
		"dense":  func(i int) bool { return i%3 == 0 },                             // fills the first span
		"sparse": func(i int) bool { return i%200 == 7 },                           // 3 in all
		"spread": func(i int) bool { return i%40 == 5 },                            // 1-2 a span, 15 in all
		"old":    func(i int) bool { return i < 100 && i%10 == 0 },                 // none in the newest 500
		"skewed": func(i int) bool { return i == total-10 || i < 200 && i%4 == 0 }, // one new, 50 old
	}
	batch := make([]store.NewMessage, total)
	for i := range batch {
		content := "filler"
		for w, has := range words {
			if has(i) {
				content += " " + w
			}
		}
		batch[i] = store.NewMessage{Role: store.RoleUser, Content: content}
	}
	ids, err := s.AppendMessages(ctx, "w", batch)
	if err != nil {
		t.Fatal(err)
	}
	for w, has := range words {
		var matches []int64 // newest first
		for i := total - 1; i >= 0; i-- {
			if has(i) {
				matches = append(matches, ids[i])
			}
		}
		hits, err := s.Search(ctx, w, store.SearchOptions{Limit: total})
		if err != nil {
			t.Fatal(err)
		}
		got := hitIDs(hits)
		if len(got) != len(matches) {
			t.Errorf("%s: %d hits, want %d", w, len(got), len(matches))
			continue
		}
		n := min(rankWindow, len(matches))
		window := slices.Clone(got[:n])
		slices.Sort(window)
		want := slices.Clone(matches[:n])
		slices.Sort(want)
		if diff := cmp.Diff(want, window); diff != "" {
			t.Errorf("%s: the ranked window is not the newest %d matches (-want +got):\n%s", w, n, diff)
		}
		if diff := cmp.Diff(matches[n:], got[n:]); diff != "" {
			t.Errorf("%s: the matches past the window, newest first (-want +got):\n%s", w, diff)
		}
	}
}

// sqlRecorder is a pgx tracer that keeps the SQL of every statement sent.
type sqlRecorder struct {
	mu sync.Mutex
	// +checklocks:mu
	sqls []string
}

func (r *sqlRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	r.sqls = append(r.sqls, d.SQL)
	r.mu.Unlock()
	return ctx
}
func (r *sqlRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// count returns how many statements sent so far hold part, and starts again.
func (r *sqlRecorder) count(part string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.sqls {
		if strings.Contains(q, part) {
			n++
		}
	}
	r.sqls = nil
	return n
}

// A word whose matches no filter passes, in a store larger than the first
// span: the bounded count finds none, and the ranked window reads nothing
// more (it read the rest of the table again; a rare role at a million
// messages took three passes over a common word's matches).
func TestSearch_NoMatchPastTheFirstSpanIsCountedOnce(t *testing.T) {
	defer func(w int) { rankWindow = w }(rankWindow)
	rankWindow = 2 // the first span: windowSpan*2 = 32 ids
	rec := &sqlRecorder{}
	s := tracedStore(t, rec)
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "r", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	batch := make([]store.NewMessage, 200)
	for i := range batch {
		batch[i] = store.NewMessage{Role: store.RoleUser, Content: fmt.Sprintf("beta number %d", i)}
	}
	if _, err := s.AppendMessages(ctx, "r", batch); err != nil {
		t.Fatal(err)
	}
	rec.count("")
	for _, tt := range []struct {
		opts  store.SearchOptions
		spans int // span reads of the ranked window
	}{
		{store.SearchOptions{Roles: []store.Role{store.RoleSystem}}, 1}, // none anywhere: the first span, the count
		{store.SearchOptions{Source: "elsewhere"}, 1},
		{store.SearchOptions{}, 1}, // the first span is full
	} {
		hits, err := s.Search(ctx, "beta", tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(tt.opts.Roles)+len(tt.opts.Source) > 0 && len(hits) != 0 {
			t.Errorf("Search %+v: %d hits, want none", tt.opts, len(hits))
		}
		if got := rec.count("ORDER BY m.id DESC LIMIT 2) m"); got != tt.spans {
			t.Errorf("Search %+v: the ranked window read %d spans, want %d", tt.opts, got, tt.spans)
		}
	}
}
