package db

import (
	"context"
	"encoding/json"

	"github.com/sessiondb/sessiondb/db/gen"
)

// The three ways a search is answered — the word index, the trigram
// index, a scan — each a page query per sort, and the snippets of their
// hits.

// rankWindow bounds relevance ranking: scoring costs a few µs a match,
// so ranking every match of a word found in every tenth message of a
// million would take a second. Relevance ranks the newest rankWindow
// matches that the search returns at all (visible, through its filters),
// then continues with the older ones newest first (see SortRelevance).
// A variable only so that tests can shrink it (setRankWindow).
var rankWindow = 2000

// pageArgs are the arguments every page query shares.
type pageArgs struct {
	source, session, roles *string
	limit, offset          int64
}

func (p *searchPlan) page(limit, offset int) pageArgs {
	return pageArgs{source: p.source, session: p.session, roles: p.roles, limit: int64(limit), offset: int64(offset)}
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

// words pages through the word index's matches and tail, the queued rows
// it would match (newest first).
func (p *searchPlan) words(ctx context.Context, q gen.DBTX, match string, a pageArgs, tail []searchRow) ([]SearchHit, error) {
	newest := func(limit, offset int64) ([]searchRow, error) {
		return convertRows(queries.MessageSearchWordsNewest(ctx, q, gen.MessageSearchWordsNewestParams{Query: match,
			Source: a.source, SessionID: a.session, Roles: a.roles, RowLimit: limit, RowOffset: offset}))
	}
	var rows []searchRow
	var err error
	switch p.opts.Sort {
	case SortNewest:
		rows, err = mergeByID(a, tail, newerFirst, newest)
	case SortOldest:
		rows, err = mergeByID(a, oldestFirst(tail), olderFirst, func(limit, offset int64) ([]searchRow, error) {
			return convertRows(queries.MessageSearchWordsOldest(ctx, q, gen.MessageSearchWordsOldestParams{Query: match,
				Source: a.source, SessionID: a.session, Roles: a.roles, RowLimit: limit, RowOffset: offset}))
		})
	default:
		rows, err = tailFirst(a, tail, func(limit, offset int64) ([]searchRow, error) {
			return relevancePage(pageArgs{limit: limit, offset: offset}, func(limit, offset int64) ([]searchRow, error) {
				return convertRows(queries.MessageSearchWordsRank(ctx, q, gen.MessageSearchWordsRankParams{Query: match,
					Source: a.source, SessionID: a.session, Roles: a.roles, WindowSize: int64(rankWindow), RowLimit: limit, RowOffset: offset}))
			}, newest)
		})
	}
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	hits := hitsFromRows(rows)
	missed, err := addSnippets(ctx, q, hits, func(text string) (string, bool) { return wordSnippet(text, p.terms) })
	if err != nil || len(missed) == 0 {
		return hits, err
	}
	// Go found no term where the index did (it folds diacritics, Go does
	// not): ask the index to mark them.
	ids := make([]SearchHit, len(missed))
	for k, i := range missed {
		ids[k] = hits[i]
	}
	marked, err := queries.MessageSearchHighlight(ctx, q, gen.MessageSearchHighlightParams{Query: match, Ids: hitIDs(ids)})
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]gen.MessageSearchHighlightRow, len(marked))
	for _, m := range marked {
		byID[m.ID] = m
	}
	var unmarked []SearchHit // queued rows: the index cannot mark them yet
	for _, i := range missed {
		if _, ok := byID[hits[i].MessageID]; !ok {
			unmarked = append(unmarked, hits[i])
		}
	}
	if len(unmarked) > 0 {
		texts, err := queries.MessageSearchTexts(ctx, q, hitIDs(unmarked))
		if err != nil {
			return nil, err
		}
		for _, t := range texts {
			m := gen.MessageSearchHighlightRow{ID: t.ID}
			m.Content, _ = wordHighlight(t.Content, p.terms)
			m.ToolName, _ = wordHighlight(t.ToolName, p.terms)
			byID[t.ID] = m
		}
	}
	for _, i := range missed {
		m, ok := byID[hits[i].MessageID]
		if !ok {
			continue
		}
		if snip, ok := highlightSnippet(m.Content); ok {
			hits[i].Snippet = snip
		} else if snip, ok := highlightSnippet(m.ToolName); ok {
			hits[i].Snippet = snip
		}
	}
	return hits, nil
}

// trigram pages through the trigram index's matches and tail, the queued
// rows it would match (newest first); short holds the terms too short for
// a trigram, checked by instr.
func (p *searchPlan) trigram(ctx context.Context, q gen.DBTX, match, short string, a pageArgs, tail []searchRow) ([]SearchHit, error) {
	newest := func(limit, offset int64) ([]searchRow, error) {
		return convertRows(queries.MessageSearchTrigramNewest(ctx, q, gen.MessageSearchTrigramNewestParams{Query: match,
			Terms: short, Source: a.source, SessionID: a.session, Roles: a.roles, RowLimit: limit, RowOffset: offset}))
	}
	var rows []searchRow
	var err error
	switch p.opts.Sort {
	case SortNewest:
		rows, err = mergeByID(a, tail, newerFirst, newest)
	case SortOldest:
		rows, err = mergeByID(a, oldestFirst(tail), olderFirst, func(limit, offset int64) ([]searchRow, error) {
			return convertRows(queries.MessageSearchTrigramOldest(ctx, q, gen.MessageSearchTrigramOldestParams{Query: match,
				Terms: short, Source: a.source, SessionID: a.session, Roles: a.roles, RowLimit: limit, RowOffset: offset}))
		})
	default:
		rows, err = tailFirst(a, tail, func(limit, offset int64) ([]searchRow, error) {
			return relevancePage(pageArgs{limit: limit, offset: offset}, func(limit, offset int64) ([]searchRow, error) {
				return convertRows(queries.MessageSearchTrigramRank(ctx, q, gen.MessageSearchTrigramRankParams{Query: match,
					Terms: short, Source: a.source, SessionID: a.session, Roles: a.roles, WindowSize: int64(rankWindow), RowLimit: limit, RowOffset: offset}))
			}, newest)
		})
	}
	if err != nil {
		return nil, err
	}
	return p.withTextSnippets(ctx, q, rows)
}

// scan answers without the full-text indexes. It has no ranking:
// relevance is newest first.
func (p *searchPlan) scan(ctx context.Context, q gen.DBTX) ([]SearchHit, error) {
	a := p.page(p.opts.Limit, p.opts.Offset)
	terms := jsonStrings(p.terms)
	var rows []searchRow
	var err error
	if p.opts.Sort == SortOldest {
		rows, err = convertRows(queries.MessageSearchScanOldest(ctx, q, gen.MessageSearchScanOldestParams{Terms: terms,
			Source: a.source, SessionID: a.session, Roles: a.roles, RowLimit: a.limit, RowOffset: a.offset}))
	} else {
		rows, err = convertRows(queries.MessageSearchScanNewest(ctx, q, gen.MessageSearchScanNewestParams{Terms: terms,
			Source: a.source, SessionID: a.session, Roles: a.roles, RowLimit: a.limit, RowOffset: a.offset}))
	}
	if err != nil {
		return nil, err
	}
	return p.withTextSnippets(ctx, q, rows)
}

// withTextSnippets makes hits of a substring search's rows, with
// snippets built in Go.
func (p *searchPlan) withTextSnippets(ctx context.Context, q gen.DBTX, rows []searchRow) ([]SearchHit, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	hits := hitsFromRows(rows)
	_, err := addSnippets(ctx, q, hits, func(text string) (string, bool) { return substringSnippet(text, p.terms) })
	return hits, err
}

// addSnippets reads the hits' texts and sets each snippet from find: around
// the match in the content, else in the tool name, else the content's
// start. It returns the indexes of the hits where find matched neither.
func addSnippets(ctx context.Context, q gen.DBTX, hits []SearchHit, find func(string) (string, bool)) (missed []int, err error) {
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
		if !ok {
			if tool, toolOK := find(t.ToolName); toolOK {
				snip, ok = tool, true
			}
		}
		hits[i].Snippet = snip
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

func hitsFromRows(rows []searchRow) []SearchHit {
	hits := make([]SearchHit, len(rows))
	for i, r := range rows {
		hits[i] = SearchHit{
			MessageID: r.ID, SessionID: r.SessionID, Role: Role(r.Role), ToolName: str(r.ToolName),
			CreatedAt: fromMillis(r.CreatedAt), Source: r.Source, Model: str(r.Model),
			SessionStartedAt: fromMillis(r.StartedAt),
		}
	}
	return hits
}

// hitIDs encodes the hits' message ids as a JSON array for json_each.
func hitIDs(hits []SearchHit) string {
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.MessageID
	}
	b, _ := json.Marshal(ids) // integers always encode
	return string(b)
}
