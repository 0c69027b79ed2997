package db

// sessiondb_rank (search_rank.go) is bm25 with the document frequencies
// given by the search: with exact counts it is bm25 to the letter, and
// with a sample's estimate it is bm25 with a nearby weight.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// rankFixtureWords fills a store with messages mixing a common word
// (alpha, in most), a middling one (beta, one in four) and a rare one
// (gamma, one in twenty), at varied lengths, and indexes them.
func rankFixtureWords(t *testing.T) *searchFixture {
	f := newSearchFixture(t, Options{})
	var ms []keyedMessage
	for i := range 400 {
		text := "alpha"
		if i%4 == 0 {
			text += " beta beta"
		}
		if i%20 == 0 {
			text += " gamma"
		}
		for range i % 7 {
			text += " filler words here"
		}
		if i%5 == 0 {
			text += " alpha"
		}
		ms = append(ms, user(fmt.Sprint("m", i), text))
	}
	f.session(t, NewSession{ID: "s", Source: "cli"}, ms...)
	f.indexed(t)
	return f
}

// rankScores returns each match's bm25 and sessiondb_rank with the doc
// frequencies docFreqs gives for query.
func rankScores(t *testing.T, s *Store, query string) (bm25, rank map[int64]float64) {
	t.Helper()
	terms := searchtext.Sanitize(query)
	freqs, err := docFreqs(t.Context(), s.readers, terms)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.readers.QueryContext(t.Context(), `SELECT rowid, bm25(messages_fts), sessiondb_rank(messages_fts, ?)
		FROM messages_fts(?)`, freqs, terms.WordMatch())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	bm25, rank = map[int64]float64{}, map[int64]float64{}
	for rows.Next() {
		var id int64
		var b, r float64
		if err := rows.Scan(&id, &b, &r); err != nil {
			t.Fatal(err)
		}
		bm25[id], rank[id] = b, r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(bm25) == 0 {
		t.Fatalf("%q matched nothing", query)
	}
	return bm25, rank
}

func TestRank_ExactCountsAreBM25(t *testing.T) {
	f := rankFixtureWords(t)
	for _, q := range []string{"alpha beta", "beta gamma", "alpha gamma", "alpha beta gamma"} {
		bm25, rank := rankScores(t, f.s, q)
		for id, b := range bm25 {
			if math.Abs(b-rank[id]) > 1e-9*math.Max(1, math.Abs(b)) {
				t.Errorf("%q, message %d: sessiondb_rank %v, bm25 %v", q, id, rank[id], b)
			}
		}
	}
}

func TestRank_OneTermKeepsBM25Order(t *testing.T) {
	f := rankFixtureWords(t)
	bm25, rank := rankScores(t, f.s, "beta")
	for a := range bm25 {
		for b := range bm25 {
			if (bm25[a] < bm25[b]) != (rank[a] < rank[b]) {
				t.Fatalf("messages %d and %d: bm25 %v < %v is %t, sessiondb_rank %v < %v is not", a, b, bm25[a], bm25[b], bm25[a] < bm25[b], rank[a], rank[b])
			}
		}
	}
}

// With a sample smaller than a word's matches, its weight is estimated
// from the density of its newest matches: here the words are spread
// evenly, so the estimate is near the count and every score near bm25's.
func TestRank_SampledCountsAreNearBM25(t *testing.T) {
	f := rankFixtureWords(t)
	old := docFreqSample
	docFreqSample = 30
	t.Cleanup(func() { docFreqSample = old })
	freqs, err := docFreqs(t.Context(), f.s.readers, searchtext.Sanitize("alpha beta"))
	if err != nil {
		t.Fatal(err)
	}
	if freqs == "[]" || !strings.Contains(freqs, "share") {
		t.Fatalf("docFreqs with a sample of 30 = %s, want estimated shares", freqs)
	}
	bm25, rank := rankScores(t, f.s, "alpha beta")
	for id, b := range bm25 {
		if math.Abs(b-rank[id]) > 0.1*math.Abs(b) {
			t.Errorf("message %d: sessiondb_rank %v, bm25 %v: more than 10%% apart", id, rank[id], b)
		}
	}
}
