package pg

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/internal/searchtext"
	"github.com/sessiondb/sessiondb/store/driver"
)

// Search answers from the word index when every term has words the index
// can match (see searchtext.Terms.WordMatch), and from the substring index
// when it found nothing or could not serve the query — SQLite's routes,
// with the same sanitised terms and the same snippet rules. Relevance is
// ts_rank on the word route (newest first among equals, within the rank
// window) and newest first on the substring route, which this engine does
// not rank (SQLite's trigram index does). Substrings match case-folded by
// the database's locale (ILIKE), which may fold letters SQLite's trigram
// tokenizer leaves alone. Hits and withHits share one snapshot.
func (d pgDriver) Search(ctx context.Context, req driver.SearchRequest, withHits func(context.Context, driver.Executor, []driver.SearchHit) error) error {
	if d.closed.Load() {
		return driver.ErrClosed
	}
	terms := searchtext.Terms(req.Terms)
	return d.cause(ctx, d.snapshot(ctx, func(tx pgx.Tx) error {
		// No parallel workers for a search: the planner picks them for a
		// window's sort, and starting one cost ~90 ms on the 2-core
		// machine, against ~10 ms of work (a rare word at a million
		// messages: 118 ms, 26 ms without; docs/PERFORMANCE.md). A search
		// reads at most a few thousand rows. Hand-written SQL: a setting
		// of this transaction only (SET LOCAL), which no query file holds.
		if _, err := tx.Exec(ctx, "SET LOCAL max_parallel_workers_per_gather = 0"); err != nil {
			return err
		}
		var hits []driver.SearchHit
		var err error
		if terms.WordMatch() != "" {
			if hits, err = searchPage(ctx, tx, req, true); err != nil {
				return err
			}
			if len(hits) == 0 && req.Offset > 0 {
				// Past the last page of word hits, or none at all?
				first := req
				first.Limit, first.Offset = 1, 0
				if some, err := searchPage(ctx, tx, first, true); err != nil || len(some) > 0 {
					return err
				}
			}
		}
		if len(hits) == 0 {
			if hits, err = searchPage(ctx, tx, req, false); err != nil {
				return err
			}
		}
		return withHits(ctx, pgExecutor{executor{q: queries, db: tx}}, hits)
	}))
}

// rankWindow bounds relevance ranking, as on every engine (see
// store.SortRelevance): the newest rankWindow matches are ranked, best
// first, and the matches past them follow, newest first. Ranking all of a
// word's matches in a large store would cost a pass over every one. A
// variable so a test can shrink it.
var rankWindow = 2000

// searchPage runs one page of a search, by words or by substrings. A
// relevance page by words is the part of [Offset, Offset+Limit) inside
// the ranked window and, after it, the part past the window, newest
// first; by substrings there is no ranking, and relevance is newest first.
func searchPage(ctx context.Context, tx pgx.Tx, req driver.SearchRequest, byWords bool) ([]driver.SearchHit, error) {
	if !byWords || req.Sort != driver.SortRelevance {
		return searchQuery(ctx, tx, req, byWords, false)
	}
	var hits []driver.SearchHit
	if req.Offset < rankWindow {
		ranked, err := searchQuery(ctx, tx, req, true, true)
		if err != nil {
			return nil, err
		}
		hits = ranked
	}
	if end := req.Offset + req.Limit; end > rankWindow {
		rest := req
		rest.Sort = driver.SortNewest
		rest.Offset = max(req.Offset, rankWindow)
		rest.Limit = end - rest.Offset
		after, err := searchQuery(ctx, tx, rest, true, false)
		if err != nil {
			return nil, err
		}
		hits = append(hits, after...)
	}
	return hits, nil
}

// searchQuery runs one query of a search: the matches in req's order
// (ranked: the rankWindow newest, best first), req's page of them.
//
// Hand-written SQL: the match has one predicate per term and the order
// depends on the request, while the generated queries are fixed
// statements held to SQLite's shapes. Every value is a parameter.
func searchQuery(ctx context.Context, tx pgx.Tx, req driver.SearchRequest, byWords, ranked bool) ([]driver.SearchHit, error) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var match []string
	var rank string
	if byWords {
		// A term matches as a phrase within one field (sessiondb_match);
		// its rank counts its words in every field alike, as SQLite's bm25
		// weighs the columns alike (the vector's field weights all 0.1,
		// the weight of a word without one).
		var query, rankBy []string
		for _, t := range req.Terms {
			p := arg(t)
			query = append(query, "sessiondb_match("+p+")")
			rankBy = append(rankBy, "sessiondb_phrase("+p+")")
		}
		// messages.words is sessiondb_words(content, tool_name, tool_text),
		// stored (migration 13): read, never recomputed.
		const words = "m.words"
		match = append(match, words+" @@ ("+strings.Join(query, " && ")+")")
		if ranked {
			rank = "ts_rank('{0.1,0.1,0.1,0.1}', " + words + ", (" + strings.Join(rankBy, " && ") + "))"
		}
	} else {
		// Each term in the content or in the tool text (SQLite's trigram
		// index has both columns); each side has its trigram index.
		for _, t := range req.Terms {
			pattern := arg("%" + likeEscape(t) + "%")
			match = append(match, "(m.content ILIKE "+pattern+" OR m.tool_text ILIKE "+pattern+")")
		}
	}
	where := []string{"m.state <> 'rewound'", "s.hidden = 0"}
	where = append(where, match...)
	if req.Source != "" {
		where = append(where, "s.source = "+arg(req.Source))
	}
	if req.SessionID != "" {
		where = append(where, "m.session_id = "+arg(req.SessionID))
	}
	if len(req.Roles) > 0 {
		where = append(where, "m.role = ANY("+arg(req.Roles)+")")
	}
	if len(req.ExcludeSources) > 0 {
		where = append(where, "s.source <> ALL("+arg(req.ExcludeSources)+")")
	}
	const cols = `m.id, m.session_id, m.role, COALESCE(m.tool_name, ''), m.created_at,
		s.source, COALESCE(s.model, ''), s.started_at, m.content, COALESCE(m.tool_text, '')`
	const from = "messages m JOIN sessions s ON s.id = m.session_id"
	var sql string
	if ranked {
		// The window is ids and scores only: the content is read for the
		// page alone. Its rows are those from windowStart on.
		start, err := windowStart(ctx, tx, from, where, args)
		if err != nil {
			return nil, err
		}
		if start > 0 {
			where = append(where, "m.id >= "+arg(start))
		}
		sql = fmt.Sprintf(`SELECT %s FROM (SELECT m.id, %s AS rank FROM %s WHERE %s ORDER BY m.id DESC LIMIT %d) w
			JOIN messages m ON m.id = w.id JOIN sessions s ON s.id = m.session_id
			ORDER BY w.rank DESC, m.id DESC LIMIT %s OFFSET %s`,
			cols, rank, from, strings.Join(where, " AND "), rankWindow, arg(req.Limit), arg(req.Offset))
	} else {
		order := "m.id DESC"
		if req.Sort == driver.SortOldest {
			order = "m.id ASC"
		}
		sql = fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %s OFFSET %s",
			cols, from, strings.Join(where, " AND "), order, arg(req.Limit), arg(req.Offset))
	}
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	var hits []driver.SearchHit
	for rows.Next() {
		var h driver.SearchHit
		var content, toolText string
		if err := rows.Scan(&h.MessageID, &h.SessionID, &h.Role, &h.ToolName, &h.CreatedAt,
			&h.Source, &h.Model, &h.SessionStartedAt, &content, &toolText); err != nil {
			rows.Close()
			return nil, err
		}
		h.Snippet, h.Marks = searchtext.PublishSnippet(snippet(content, h.ToolName, toolText, req.Terms, byWords))
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// snippet cuts a hit's snippet as SQLite's engine does: around the first
// match in the content, else in the tool name, else in the tool text (a
// call's name and arguments), by the route's rules
// (whole words, or substrings); a word hit WordSnippet cannot place (the
// index folded a diacritic) is marked by the tokenizer's rules, and one
// nothing places gets the start of the content, unmarked.
func snippet(content, toolName, toolText string, terms searchtext.Terms, byWords bool) string {
	find := searchtext.SubstringSnippet
	if byWords {
		find = searchtext.WordSnippet
	}
	for _, text := range []string{content, toolName, toolText} {
		if snip, ok := find(text, terms); ok {
			return snip
		}
	}
	if byWords {
		// The index folds diacritics, WordSnippet does not: mark what the
		// index matched by the tokenizer's own rules.
		for _, text := range []string{content, toolName, toolText} {
			if marked, ok := searchtext.WordHighlight(text, terms); ok {
				if snip, ok := searchtext.HighlightSnippet(marked); ok {
					return snip
				}
			}
		}
	}
	snip, _ := find(content, terms)
	return snip
}

// likeEscape makes a term a literal inside an ILIKE pattern (whose escape
// character is the backslash).
func likeEscape(term string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(term)
}

// windowSpan is the first span of newest ids windowStart looks in, in
// windows: a word in one message in sixteen fills its window there.
const windowSpan = 16

// windowStart returns the id of the oldest message in the ranked window
// (the newest rankWindow matches), or 0 when the window may be every
// match, without reading every match. The word index alone cannot say
// which matches are newest: the plan would read every match's row (a word
// in one message in ten: a tenth of the table) to sort them, or walk the
// table newest first testing every row. With an id range beside the index
// the server combines the two (BitmapAnd) and reads only the matches in
// the span; but the range's bitmap costs its ids (~40 ms for 256,000), so
// the span grows only as far as the matches found in it say it must:
//
//   - the newest windowSpan windows of ids first (a common word fills its
//     window there: one probe);
//   - matches found but too few: at their density the table holds under
//     half a window of them → 0 (the window is every match, and ranking
//     them reads no more rows than this search returns); else the span
//     that density says holds the window, with half again for margin;
//   - none found: a count of the matches, bounded at a window, without a
//     range; under a window → 0, else the span grows eightfold.
//
// The window is the same rows whatever the span; where it ends is only a
// cost. The cost a search pays past the first probe is bounded by the
// matches it returns, except for a word rare among the newest ids and
// common long before them, whose older matches the density misses: the
// window is then every match, read once (docs/PERFORMANCE.md).
func windowStart(ctx context.Context, tx pgx.Tx, from string, where []string, args []any) (int64, error) {
	var top int64
	if err := tx.QueryRow(ctx, "SELECT COALESCE(max(id), 0) FROM messages").Scan(&top); err != nil {
		return 0, err
	}
	window := int64(rankWindow)
	match := strings.Join(where, " AND ")
	args = append(args[:len(args):len(args)], int64(0))
	floor := "$" + strconv.Itoa(len(args))
	probe := fmt.Sprintf(`SELECT count(*), COALESCE(min(id), 0) FROM
		(SELECT m.id FROM %s WHERE %s AND m.id > %s ORDER BY m.id DESC LIMIT %d) w`,
		from, match, floor, window)
	counted := false
	for span := windowSpan * window; ; {
		after := max(top-span, 0)
		args[len(args)-1] = after
		var n, oldest int64
		if err := tx.QueryRow(ctx, probe, args...).Scan(&n, &oldest); err != nil {
			return 0, err
		}
		switch {
		case n >= window:
			return oldest, nil
		case after == 0:
			return 0, nil
		case n > 0:
			if n*top/span < window/2 {
				return 0, nil
			}
			span = max(2*span, span*window/n*3/2)
		case !counted:
			var total int64
			count := fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s WHERE %s LIMIT %d) w", from, match, window)
			if err := tx.QueryRow(ctx, count, args[:len(args)-1]...).Scan(&total); err != nil {
				return 0, err
			}
			if total < window {
				return 0, nil
			}
			counted = true
			span *= 8
		default:
			span *= 8
		}
	}
}
