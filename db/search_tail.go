package db

// search_tail.go covers the messages still waiting for the full-text
// indexes (the messages past the mark, and edited rows in fts_pending):
// appends commit before the background indexer indexes them, and Search
// must find every acknowledged message. The waiting rows are read in the
// search's snapshot and matched in Go by the indexes' own rules
// (ftstokens.go), then merged with the indexes' hits: by id, exactly, for
// newest and oldest; ahead of the ranked hits, newest first, for relevance
// (see SortRelevance). The tail is short — the indexer keeps it to a
// fraction of a second of appends, but while the disk is full
// (spaceshort.go) — and reading it costs a few µs a row.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// tailRow is a queued message the search's filters let through.
type tailRow struct {
	searchRow
	content, toolName, toolText string
	// Whether the word or the trigram index still holds the row, with
	// the text it had when it was indexed (an edit queues the row again;
	// so may a row indexed by hand that left the queue alone): the tail
	// answers for it, and the index's hits leave it out (requeued).
	inWords, inTrigram bool
}

// searchTailSQL reads the waiting rows through the page queries' filters,
// newest first, each once (a row edited twice is queued twice). A row past
// the mark is in neither index (ftsqueue.go). A missing mark (damage, until
// the indexer marks the index stale) leaves every message in the tail:
// slow, and every acknowledged message still found.
// Hand-written: sqlc cannot see FTS5's shadow tables (*_docsize, one row
// per indexed message).
const searchTailSQL = `
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at,
       m.content, CAST(COALESCE(m.tool_text, '') AS TEXT),
       EXISTS (SELECT 1 FROM messages_fts_docsize d WHERE d.id = p.id),
       EXISTS (SELECT 1 FROM messages_fts_trigram_docsize d WHERE d.id = p.id)
FROM (SELECT id FROM fts_pending
      UNION SELECT id FROM messages WHERE id > COALESCE((SELECT indexed_through FROM fts_mark), 0)) p
JOIN messages m ON m.id = p.id
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(?1 AS TEXT) IS NULL OR s.source = ?1)
  AND (CAST(?2 AS TEXT) IS NULL OR m.session_id = ?2)
  AND (CAST(?3 AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(?3)))
  AND (CAST(?4 AS TEXT) IS NULL OR s.source NOT IN (SELECT value FROM json_each(?4)))
ORDER BY p.id DESC`

// requeued returns, as a JSON array for the page queries, the ids of the
// queued rows that the word index (words) or the trigram index still
// holds: their hits come from the tail.
func requeued(tail []tailRow, words bool) string {
	var ids []int64
	for _, t := range tail {
		if (words && t.inWords) || (!words && t.inTrigram) {
			ids = append(ids, t.ID)
		}
	}
	if len(ids) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// loadTail reads the queued rows the search's filters let through.
func (p *searchPlan) loadTail(ctx context.Context, q gen.DBTX) ([]tailRow, error) {
	rows, err := q.QueryContext(ctx, searchTailSQL, p.source, p.session, p.roles, p.exclude)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tail []tailRow
	for rows.Next() {
		var t tailRow
		r := &t.searchRow
		if err := rows.Scan(&r.ID, &r.SessionID, &r.Role, &r.ToolName, &r.CreatedAt, &r.Source, &r.Model, &r.StartedAt,
			&t.content, &t.toolText, &t.inWords, &t.inTrigram); err != nil {
			return nil, err
		}
		t.toolName = rules.Str(r.ToolName)
		tail = append(tail, t)
	}
	return tail, rows.Err()
}

// wordTail is the queued rows the word index would match: every term's
// tokens side by side in the content, the tool name or the tool text
// (one column: FTS5 matches a phrase within a column). Newest first.
func (p *searchPlan) wordTail(tail []tailRow) []searchRow {
	if len(tail) == 0 {
		return nil
	}
	phrases := make([]string, len(p.terms))
	for i, term := range p.terms {
		var b strings.Builder
		searchtext.WordTokens(&b, term)
		if b.Len() < 3 { // no token: FTS5 matches nothing
			return nil
		}
		phrases[i] = b.String()
	}
	var hits []searchRow
	var cols [3]strings.Builder
	var tokens [3]string
	for _, t := range tail {
		for i, text := range [3]string{t.content, t.toolName, t.toolText} {
			cols[i].Reset()
			searchtext.WordTokens(&cols[i], text)
			tokens[i] = cols[i].String()
		}
		inNone := func(ph string) bool {
			return !strings.Contains(tokens[0], ph) && !strings.Contains(tokens[1], ph) && !strings.Contains(tokens[2], ph)
		}
		if !slices.ContainsFunc(phrases, inNone) {
			hits = append(hits, t.searchRow)
		}
	}
	return hits
}

// trigramTail is the queued rows the trigram route would match: every
// term of three characters or more a substring of the content or of the
// tool text as the trigram tokenizer folds them (FTS5 matches each phrase
// in any column), every shorter one of either as SQLite's lower() folds
// it (instr). Newest first.
func (p *searchPlan) trigramTail(tail []tailRow) []searchRow {
	if len(tail) == 0 {
		return nil
	}
	var long, short []string
	for _, term := range p.terms {
		if len([]rune(term)) >= searchtext.TrigramLen {
			var b strings.Builder
			searchtext.TrigramText(&b, term)
			long = append(long, b.String())
		} else {
			short = append(short, searchtext.SQLLower(term))
		}
	}
	var hits []searchRow
	var folded, foldedTool strings.Builder
	for _, t := range tail {
		folded.Reset()
		foldedTool.Reset()
		searchtext.TrigramText(&folded, t.content)
		searchtext.TrigramText(&foldedTool, t.toolText)
		f, ft := folded.String(), foldedTool.String()
		if slices.ContainsFunc(long, func(term string) bool { return !strings.Contains(f, term) && !strings.Contains(ft, term) }) {
			continue
		}
		if len(short) > 0 {
			lower, lowerTool := searchtext.SQLLower(t.content), searchtext.SQLLower(t.toolText)
			if slices.ContainsFunc(short, func(term string) bool {
				return !strings.Contains(lower, term) && !strings.Contains(lowerTool, term)
			}) {
				continue
			}
		}
		hits = append(hits, t.searchRow)
	}
	return hits
}

// pageFunc reads a page of an index's matches in one order.
type pageFunc func(limit, offset int64) ([]searchRow, error)

// mergeByID returns the page a asks for of the index's matches (fetch, in
// the sort's order) merged with tail (the matching queued rows, in the
// same order; first says which of two ids comes first). The indexes' rows
// a page can hold lie at most len(tail) before its offset, so it reads
// those and the page (a few rows more than the page alone); only when the
// index has fewer matches than that does it read them all (fewer than
// the offset).
func mergeByID(a pageArgs, tail []searchRow, first func(x, y int64) bool, fetch pageFunc) ([]searchRow, error) {
	if len(tail) == 0 {
		return fetch(a.limit, a.offset)
	}
	n := int64(len(tail))
	from := max(0, a.offset-n)
	got, err := fetch(a.limit+a.offset-from, from)
	if err != nil {
		return nil, err
	}
	start := int64(0) // the merged position of the first row merged below
	switch {
	case from > 0 && len(got) == 0: // fewer than from matches in the index
		if got, err = fetch(from, 0); err != nil {
			return nil, err
		}
	case from > 0:
		// The tail rows ahead of got[0] are all before the page.
		b, _ := slices.BinarySearchFunc(tail, got[0].ID, func(t searchRow, id int64) int {
			if first(t.ID, id) {
				return -1
			}
			return 1
		})
		tail = tail[b:]
		start = from + int64(b)
	}
	merged := make([]searchRow, 0, len(got)+len(tail))
	i, j := 0, 0
	for i < len(got) || j < len(tail) {
		if j == len(tail) || (i < len(got) && first(got[i].ID, tail[j].ID)) {
			merged = append(merged, got[i])
			i++
		} else {
			merged = append(merged, tail[j])
			j++
		}
	}
	skip := a.offset - start
	if skip >= int64(len(merged)) {
		return nil, nil
	}
	return merged[skip:min(skip+a.limit, int64(len(merged)))], nil
}

// tailFirst returns the page a asks for of tail (newest first) followed by
// rest (the ranked order of the index's matches).
func tailFirst(a pageArgs, tail []searchRow, rest pageFunc) ([]searchRow, error) {
	n := int64(len(tail))
	if a.offset >= n {
		return rest(a.limit, a.offset-n)
	}
	page := slices.Clone(tail[a.offset:min(a.offset+a.limit, n)])
	if int64(len(page)) == a.limit {
		return page, nil
	}
	more, err := rest(a.limit-int64(len(page)), 0)
	return append(page, more...), err
}

func newerFirst(x, y int64) bool { return x > y }
func olderFirst(x, y int64) bool { return x < y }

// oldestFirst is tail (newest first) reversed.
func oldestFirst(tail []searchRow) []searchRow {
	out := slices.Clone(tail)
	slices.Reverse(out)
	return out
}
