package db

// search_rank.go is relevance on the word route without bm25's pass over
// every match. FTS5's bm25() weighs each phrase of a query by its inverse
// document frequency, and learns a phrase's document frequency by running
// the phrase over the whole index (xQueryPhrase) on every search: for a
// word in one message in ten, a pass over a tenth of the store — at a
// million messages most of a relevance search's time, whatever the page
// and the window (issue 37). sessiondb_rank is bm25 to the letter (the
// same k1, b, document length and average, the same clamp of a negative
// IDF), with the document frequencies given by the search instead, from a
// bounded sample (docFreqs). With one phrase the frequency cannot change
// the order (it scales every score alike) and none is given.

import (
	"context"
	"encoding/json"
	"math"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// docFreqSample is how many of a phrase's newest matches docFreqs reads:
// a phrase found fewer times has its exact count; one found more often
// has its frequency estimated from how densely those matches lie among
// the newest messages. A variable only so that tests can shrink it.
var docFreqSample = 2000

// docFreq is one phrase's document frequency as the search knows it:
// Hits matches exactly, or Share of the index's rows (estimated).
type docFreq struct {
	Hits  int64   `json:"hits,omitempty"`
	Share float64 `json:"share,omitempty"`
}

// docFreqSQL counts a phrase's newest matches, at most a sample's, and
// gives the oldest id among them.
const docFreqSQL = `SELECT count(*), COALESCE(min(id), 0) FROM
  (SELECT rowid AS id FROM messages_fts(?1) ORDER BY rowid DESC LIMIT ?2)`

// docFreqs is the argument sessiondb_rank takes for terms: a JSON array
// of each term's docFreq, or "[]" when there is one term (its frequency
// cannot change the order). A term found docFreqSample times or more is
// given the share of ids its newest matches span that they are: the
// store's recent density of the word, which is what bm25's count measures
// when a word is spread alike over time, and costs a sample's reads
// instead of a pass over every match.
func docFreqs(ctx context.Context, q gen.DBTX, terms searchtext.Terms) (string, error) {
	if len(terms) < 2 {
		return "[]", nil
	}
	top, err := queries.MessageMaxID(ctx, q)
	if err != nil {
		return "", err
	}
	freqs := make([]docFreq, len(terms))
	for i, term := range terms {
		var n, oldest int64
		if err := q.QueryRowContext(ctx, docFreqSQL, searchtext.QuoteTerms([]string{term}), docFreqSample).Scan(&n, &oldest); err != nil {
			return "", err
		}
		if n < int64(docFreqSample) || top < oldest {
			freqs[i].Hits = n
			continue
		}
		freqs[i].Share = float64(n) / float64(top-oldest+1)
	}
	b, _ := json.Marshal(freqs) // numbers always encode
	return string(b), nil
}

// registerRank adds sessiondb_rank(messages_fts, doc_freqs) to FTS5 on a
// connection: bm25(messages_fts) (all columns weighted 1) with each
// phrase's document frequency taken from doc_freqs (docFreqs) instead of
// a pass over the index; "[]" weighs every phrase alike.
func registerRank(api *fts5.API) error {
	return api.CreateFunction("sessiondb_rank", rankFunction)
}

// rankStats are a query's constants, computed at its first row.
type rankStats struct {
	avgLen float64
	idf    []float64
	freq   []float64
}

// rankFunction is sessiondb_rank: FTS5's fts5Bm25Function in Go.
func rankFunction(fts fts5.Context, ctx sqlite3.Context, arg ...sqlite3.Value) {
	st, _ := fts.GetAuxdata(false).(*rankStats)
	if st == nil {
		var err error
		if st, err = newRankStats(fts, arg); err != nil {
			ctx.ResultError(err)
			return
		}
		if err := fts.SetAuxdata(st); err != nil {
			ctx.ResultError(err)
			return
		}
	}
	clear(st.freq)
	n, err := fts.InstCount()
	if err != nil {
		ctx.ResultError(err)
		return
	}
	for i := range n {
		phrase, _, _, err := fts.Inst(i)
		if err != nil {
			ctx.ResultError(err)
			return
		}
		st.freq[phrase]++
	}
	size, err := fts.ColumnSize(-1)
	if err != nil {
		ctx.ResultError(err)
		return
	}
	const k1, b = 1.2, 0.75
	score := 0.0
	for i, f := range st.freq {
		score += st.idf[i] * (f * (k1 + 1)) / (f + k1*(1-b+b*float64(size)/st.avgLen))
	}
	ctx.ResultFloat(-score)
}

// newRankStats reads the index's row count and average length (kept by
// FTS5, no pass) and turns doc_freqs into each phrase's IDF, clamped as
// bm25 clamps it.
func newRankStats(fts fts5.Context, arg []sqlite3.Value) (*rankStats, error) {
	rows, err := fts.RowCount()
	if err != nil {
		return nil, err
	}
	tokens, err := fts.ColumnTotalSize(-1)
	if err != nil {
		return nil, err
	}
	rows = max(rows, 1)
	phrases := fts.PhraseCount()
	st := &rankStats{avgLen: float64(tokens) / float64(rows), idf: make([]float64, phrases), freq: make([]float64, phrases)}
	var freqs []docFreq
	if len(arg) > 0 {
		if err := json.Unmarshal([]byte(arg[0].Text()), &freqs); err != nil {
			return nil, err
		}
	}
	for i := range st.idf {
		if len(freqs) != phrases {
			st.idf[i] = 1
			continue
		}
		hits := float64(freqs[i].Hits)
		if freqs[i].Share > 0 {
			hits = min(float64(rows), freqs[i].Share*float64(rows))
		}
		idf := math.Log((float64(rows) - hits + 0.5) / (hits + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		st.idf[i] = idf
	}
	return st, nil
}
