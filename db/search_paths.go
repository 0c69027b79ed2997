package db

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/internal/searchtext"
	"github.com/sessiondb/sessiondb/store/driver"
)

// The three ways a search is answered — the word index, the trigram
// index, a scan — each a page query per sort, and the snippets of their
// hits.

// rankWindow bounds relevance ranking: scoring costs a few µs a match,
// so ranking every match of a word found in every tenth message of a
// million would take a second (and the score's weights are not learnt
// from every match either: search_rank.go). Relevance ranks the newest rankWindow
// matches that the search returns at all (visible, through its filters),
// then continues with the older ones newest first (see SortRelevance).
// A variable only so that tests can shrink it (setRankWindow).
var rankWindow = 2000

// pageArgs are the arguments every page query shares.
type pageArgs struct {
	source, session, roles *string
	exclude                *string // JSON array of sources
	limit, offset          int64
}

// filtered reports whether the search has a filter: a source, a
// session, roles or excluded sources.
func (a pageArgs) filtered() bool {
	return a.source != nil || a.session != nil || a.roles != nil || a.exclude != nil
}

func (p *searchPlan) page(limit, offset int) pageArgs {
	return pageArgs{source: p.source, session: p.session, roles: p.roles, exclude: p.exclude, limit: int64(limit), offset: int64(offset)}
}

// relevancePage pages through the relevance order: positions below
// rankWindow are the ranked window (rank), the rest the newest-first order
// from the same position (newest), which skips exactly the window's rows —
// both count the same matches, newest first. A page that straddles the
// window's end takes the window's last rows and then the first older ones;
// no row is on two pages and none is skipped.
func relevancePage(a pageArgs, rank, newest func(limit, offset int64) ([]searchRow, error)) ([]searchRow, error) {
	window := int64(rankWindow)
	if a.offset >= window {
		return newest(a.limit, a.offset)
	}
	rows, err := rank(a.limit, a.offset)
	if err != nil || int64(len(rows)) == a.limit || a.offset+int64(len(rows)) < window {
		return rows, err // a full page, or the window was not full: no older matches
	}
	// The page runs past the end of a full window: the older matches follow.
	more, err := newest(a.limit-int64(len(rows)), window)
	return append(rows, more...), err
}

// windowUnfiltered lets the word route's relevance window skip reading
// each match's messages row when nothing needs it (unfiltered). A
// variable only so that tests can compare both windows; unfilteredWindows
// counts the windows read that way, so that they can tell it is used.
var (
	windowUnfiltered  = true
	unfilteredWindows atomic.Int64
)

// unfiltered reports whether the word route's relevance window may be
// MessageSearchWordsRankUnfiltered: no source, session or role filter, no
// excluded source, and
// no hidden session in the search's snapshot. Those are the only checks
// that need a match's messages row; the window's work besides FTS5's,
// mostly reading that row, was a third of a relevance search's CPU
// (docs/PERFORMANCE.md). The rows are the same on a store whose index
// holds only messages that exist or wait in fts_deleted, and whose
// messages all have a session (see MessageSearchWordsRankUnfiltered).
func (p *searchPlan) unfiltered(ctx context.Context, q gen.DBTX, a pageArgs) (bool, error) {
	if !windowUnfiltered || a.filtered() {
		return false, nil
	}
	hidden, err := queries.SearchAnyHidden(ctx, q)
	return !hidden, err
}

// words pages through the word index's matches and tail, the queued rows
// it would match (newest first).
func (p *searchPlan) words(ctx context.Context, q gen.DBTX, match string, a pageArgs, tail []searchRow) ([]driver.SearchHit, error) {
	newest := func(limit, offset int64) ([]searchRow, error) {
		return convertRows(queries.MessageSearchWordsNewest(ctx, q, gen.MessageSearchWordsNewestParams{Query: match, Requeued: p.requeuedWords,
			Source: a.source, ExcludeSources: a.exclude, SessionID: a.session, Roles: a.roles, LoID: p.lo, HiID: p.hi, RowLimit: limit, RowOffset: offset}))
	}
	var rows []searchRow
	var err error
	switch p.opts.Sort {
	case SortNewest:
		rows, err = mergeByID(a, tail, newerFirst, newest)
	case SortOldest:
		rows, err = mergeByID(a, oldestFirst(tail), olderFirst, func(limit, offset int64) ([]searchRow, error) {
			return convertRows(queries.MessageSearchWordsOldest(ctx, q, gen.MessageSearchWordsOldestParams{Query: match, Requeued: p.requeuedWords,
				Source: a.source, ExcludeSources: a.exclude, SessionID: a.session, Roles: a.roles, LoID: p.lo, HiID: p.hi, RowLimit: limit, RowOffset: offset}))
		})
	default:
		var unfiltered *bool // asked once, and only when the window is read
		var freqs string     // the terms' document frequencies (search_rank.go), likewise
		rows, err = tailFirst(a, tail, func(limit, offset int64) ([]searchRow, error) {
			return relevancePage(pageArgs{limit: limit, offset: offset}, func(limit, offset int64) ([]searchRow, error) {
				if unfiltered == nil {
					u, err := p.unfiltered(ctx, q, a)
					if err != nil {
						return nil, err
					}
					unfiltered = &u
					if freqs, err = docFreqs(ctx, q, p.terms); err != nil {
						return nil, err
					}
				}
				if *unfiltered {
					unfilteredWindows.Add(1)
					return convertRows(queries.MessageSearchWordsRankUnfiltered(ctx, q, gen.MessageSearchWordsRankUnfilteredParams{Query: match,
						DocFreqs: freqs, Requeued: p.requeuedWords, WindowSize: int64(rankWindow), RowLimit: limit, RowOffset: offset}))
				}
				return convertRows(queries.MessageSearchWordsRank(ctx, q, gen.MessageSearchWordsRankParams{Query: match, DocFreqs: freqs, Requeued: p.requeuedWords,
					Source: a.source, ExcludeSources: a.exclude, SessionID: a.session, Roles: a.roles, LoID: p.lo, HiID: p.hi, WindowSize: int64(rankWindow), RowLimit: limit, RowOffset: offset}))
			}, newest)
		})
	}
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	hits := hitsFromRows(rows)
	missed, err := addSnippets(ctx, q, hits, func(text string) (string, bool) { return searchtext.WordSnippet(text, p.terms) })
	if err != nil || len(missed) == 0 {
		return hits, err
	}
	// The quick snippet found no term where the index did (the index folds
	// diacritics, WordSnippet does not): mark them by the index's own rules
	// (a contentless index has no text of its own to highlight).
	ids := make([]driver.SearchHit, len(missed))
	for k, i := range missed {
		ids[k] = hits[i]
	}
	texts, err := queries.MessageSearchTexts(ctx, q, hitIDs(ids))
	if err != nil {
		return nil, err
	}
	byID := make(map[int64][3]string, len(texts))
	for _, t := range texts {
		var m [3]string
		m[0], _ = searchtext.WordHighlight(t.Content, p.terms)
		m[1], _ = searchtext.WordHighlight(t.ToolName, p.terms)
		m[2], _ = searchtext.WordHighlight(t.ToolText, p.terms)
		byID[t.ID] = m
	}
	for _, i := range missed {
		m, ok := byID[hits[i].MessageID]
		if !ok {
			continue
		}
		for _, marked := range m {
			if snip, ok := searchtext.HighlightSnippet(marked); ok {
				hits[i].Snippet, hits[i].Marks = searchtext.PublishSnippet(snip)
				break
			}
		}
	}
	return hits, nil
}

// trigramQuery is a query for the trigram route (Terms.TrigramMatch): the
// index's expression for the candidates, the folded long terms that
// decide them, the short terms checked by instr.
type trigramQuery struct{ match, long, short string }

// trigram pages through the trigram index's matches and tail, the queued
// rows it would match (newest first).
func (p *searchPlan) trigram(ctx context.Context, q gen.DBTX, t trigramQuery, a pageArgs, tail []searchRow) ([]driver.SearchHit, error) {
	newest := func(limit, offset int64) ([]searchRow, error) {
		return convertRows(queries.MessageSearchTrigramNewest(ctx, q, gen.MessageSearchTrigramNewestParams{Query: t.match, Requeued: p.requeuedTrigram,
			Long: t.long, Terms: t.short, Source: a.source, ExcludeSources: a.exclude, SessionID: a.session, Roles: a.roles, LoID: p.lo, HiID: p.hi, RowLimit: limit, RowOffset: offset}))
	}
	var rows []searchRow
	var err error
	switch p.opts.Sort {
	case SortNewest:
		rows, err = mergeByID(a, tail, newerFirst, newest)
	case SortOldest:
		rows, err = mergeByID(a, oldestFirst(tail), olderFirst, func(limit, offset int64) ([]searchRow, error) {
			return convertRows(queries.MessageSearchTrigramOldest(ctx, q, gen.MessageSearchTrigramOldestParams{Query: t.match, Requeued: p.requeuedTrigram,
				Long: t.long, Terms: t.short, Source: a.source, ExcludeSources: a.exclude, SessionID: a.session, Roles: a.roles, LoID: p.lo, HiID: p.hi, RowLimit: limit, RowOffset: offset}))
		})
	default:
		rows, err = tailFirst(a, tail, func(limit, offset int64) ([]searchRow, error) {
			return relevancePage(pageArgs{limit: limit, offset: offset}, func(limit, offset int64) ([]searchRow, error) {
				if a.filtered() {
					return convertRows(queries.MessageSearchTrigramRankFiltered(ctx, q, gen.MessageSearchTrigramRankFilteredParams{Query: t.match, Requeued: p.requeuedTrigram,
						Long: t.long, Terms: t.short, Source: a.source, ExcludeSources: a.exclude, SessionID: a.session, Roles: a.roles, LoID: p.lo, HiID: p.hi, WindowSize: int64(rankWindow), RowLimit: limit, RowOffset: offset}))
				}
				return convertRows(queries.MessageSearchTrigramRank(ctx, q, gen.MessageSearchTrigramRankParams{Query: t.match, Requeued: p.requeuedTrigram,
					Long: t.long, Terms: t.short, Source: a.source, ExcludeSources: a.exclude, SessionID: a.session, Roles: a.roles, LoID: p.lo, HiID: p.hi, WindowSize: int64(rankWindow), RowLimit: limit, RowOffset: offset}))
			}, newest)
		})
	}
	if err != nil {
		return nil, err
	}
	return p.withTextSnippets(ctx, q, rows)
}

// scanWindowIDs is how many message ids one read snapshot of a scan
// covers. A scan reads every row of its window (instr over the content):
// about 6.5 µs a row, so a window takes some 130 ms, and a scan of a
// million rows — over 6 s in one statement, pinning the WAL throughout
// (see walpin.go) — never holds a snapshot longer than that.
var scanWindowIDs int64 = 20_000

// scanSearch answers without the full-text indexes, reading the messages
// table a window of ids at a time, each window in a read snapshot of its
// own, from the newest id at the start (or the oldest, for SortOldest)
// until the page is full. It has no ranking: relevance is newest first.
// Rows are matched by id ranges, so a message committed before the
// search began is counted once; one committed during it is not seen, and
// a row that changes state meanwhile is judged by its window's moment.
// Like the index routes it reads only the search's span of ids (span): a
// session's scan reads that session's span, not the table.
func (s *engine) scanSearch(ctx context.Context, p *searchPlan) ([]driver.SearchHit, error) {
	a := p.page(p.opts.Limit, p.opts.Offset)
	terms := searchtext.JSONStrings(p.terms)
	want := a.offset + a.limit
	var top int64
	if err := s.snapshotTx(ctx, func(q gen.DBTX) (err error) {
		if top, err = queries.MessageMaxID(ctx, q); err != nil {
			return err
		}
		return p.span(ctx, q)
	}); err != nil {
		return nil, err
	}
	var rows []searchRow
	oldest := p.opts.Sort == SortOldest
	// The windows cover the ids in (lo, hi): the span's, up to the newest.
	for lo, hi := max(p.lo-1, 0), min(top, p.hi)+1; lo < hi-1 && int64(len(rows)) < want; {
		after, before := max(lo, hi-1-scanWindowIDs), hi // newest first: the window below hi
		if oldest {
			after, before = lo, min(hi, lo+1+scanWindowIDs)
		}
		limit := want - int64(len(rows))
		err := s.snapshotTx(ctx, func(q gen.DBTX) error {
			var page []searchRow
			var err error
			if oldest {
				page, err = convertRows(queries.MessageSearchScanOldest(ctx, q, gen.MessageSearchScanOldestParams{AfterID: after, BeforeID: before,
					Terms: terms, Source: a.source, ExcludeSources: a.exclude, SessionID: a.session, Roles: a.roles, RowLimit: limit}))
			} else {
				page, err = convertRows(queries.MessageSearchScanNewest(ctx, q, gen.MessageSearchScanNewestParams{AfterID: after, BeforeID: before,
					Terms: terms, Source: a.source, ExcludeSources: a.exclude, SessionID: a.session, Roles: a.roles, RowLimit: limit}))
			}
			rows = append(rows, page...)
			return err
		})
		if err != nil {
			return nil, err
		}
		if oldest {
			lo = before - 1
		} else {
			hi = after + 1
		}
	}
	rows = rows[min(a.offset, int64(len(rows))):]
	var hits []driver.SearchHit
	err := s.snapshotTx(ctx, func(q gen.DBTX) (err error) {
		hits, err = p.withTextSnippets(ctx, q, rows)
		return err
	})
	return hits, err
}

// withTextSnippets makes hits of a substring search's rows, with
// snippets built in Go.
func (p *searchPlan) withTextSnippets(ctx context.Context, q gen.DBTX, rows []searchRow) ([]driver.SearchHit, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	hits := hitsFromRows(rows)
	_, err := addSnippets(ctx, q, hits, func(text string) (string, bool) { return searchtext.SubstringSnippet(text, p.terms) })
	return hits, err
}

// addSnippets reads the hits' texts and sets each snippet from find: around
// the match in the content, else in the tool name, else in the tool text
// (a call's name and arguments: what the hit matched), else the content's
// start. It returns the indexes of the hits where find matched neither.
func addSnippets(ctx context.Context, q gen.DBTX, hits []driver.SearchHit, find func(string) (string, bool)) (missed []int, err error) {
	texts, err := queries.MessageSearchTexts(ctx, q, hitIDs(hits))
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]gen.MessageSearchTextsRow, len(texts))
	for _, t := range texts {
		byID[t.ID] = t
	}
	for i := range hits {
		t := byID[hits[i].MessageID]
		snip, ok := find(t.Content)
		for _, other := range []string{t.ToolName, t.ToolText} {
			if ok {
				break
			}
			if s, found := find(other); found {
				snip, ok = s, true
			}
		}
		hits[i].Snippet, hits[i].Marks = searchtext.PublishSnippet(snip)
		if !ok {
			missed = append(missed, i)
		}
	}
	return missed, nil
}

// convertRows turns a page query's generated rows into searchRows.
func convertRows[T ~struct {
	ID        int64
	SessionID string
	Role      string
	ToolName  *string
	CreatedAt int64
	Source    string
	Model     *string
	StartedAt int64
}](rows []T, err error) ([]searchRow, error) {
	out := make([]searchRow, len(rows))
	for i, r := range rows {
		out[i] = searchRow(r)
	}
	return out, err
}

func hitsFromRows(rows []searchRow) []driver.SearchHit {
	hits := make([]driver.SearchHit, len(rows))
	for i, r := range rows {
		hits[i] = driver.SearchHit{
			MessageID: r.ID, SessionID: r.SessionID, Role: r.Role, ToolName: rules.Str(r.ToolName),
			CreatedAt: r.CreatedAt, Source: r.Source, Model: rules.Str(r.Model),
			SessionStartedAt: r.StartedAt,
		}
	}
	return hits
}

// hitIDs encodes the hits' message ids as a JSON array for json_each.
func hitIDs(hits []driver.SearchHit) string {
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.MessageID
	}
	b, _ := json.Marshal(ids) // integers always encode
	return string(b)
}
