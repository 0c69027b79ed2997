package pg

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
		// Two settings of this transaction only (set_config's true: SET
		// LOCAL), which no query file holds, hence hand-written SQL:
		//  - no parallel workers: the planner picks them for a window's
		//    sort, and starting one cost ~90 ms on the 2-core machine
		//    against ~10 ms of work (a rare word at a million messages:
		//    118 ms, 8 without); a search reads a few thousand rows;
		//  - a plan for each statement's values: a span of ids planned
		//    once for any values (a generic plan) guesses its length, and
		//    the guess walked the primary key through the whole table for
		//    a rare word (7 -> 44 ms). Planning costs ~1 ms a statement.
		if _, err := tx.Exec(ctx, `SELECT set_config('max_parallel_workers_per_gather', '0', true),
			set_config('plan_cache_mode', 'force_custom_plan', true)`); err != nil {
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
		return withHits(ctx, pgExecutor{executor: executor{q: queries, db: tx}}, hits)
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
	var place map[int64]int // a ranked page's ids: their place in it
	if ranked {
		// The window's ids and scores come first; the content is read for
		// the page alone.
		window, err := rankedWindow(ctx, tx, from, strings.Join(where, " AND "), rank, args)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(window, func(a, b scored) int { // best first, ties newest first
			if c := cmp.Compare(b.rank, a.rank); c != 0 {
				return c
			}
			return cmp.Compare(b.id, a.id)
		})
		page := window[min(req.Offset, len(window)):min(req.Offset+req.Limit, len(window))]
		if len(page) == 0 {
			return nil, nil
		}
		place = make(map[int64]int, len(page))
		ids := make([]int64, len(page))
		for i, w := range page {
			place[w.id], ids[i] = i, w.id
		}
		args = []any{ids}
		sql = fmt.Sprintf("SELECT %s FROM %s WHERE m.id = ANY($1)", cols, from)
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
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if place != nil { // the ranked page, in the window's order
		slices.SortFunc(hits, func(a, b driver.SearchHit) int { return cmp.Compare(place[a.MessageID], place[b.MessageID]) })
	}
	return hits, nil
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

// windowSpan is the first span of newest ids rankedWindow reads, in
// windows: a word in one message in sixteen fills its window there.
const windowSpan = 16

// scored is a match of the ranked window: its id and its score.
type scored struct {
	id   int64
	rank float32
}

// rankedWindow returns the ranked window — the newest rankWindow matches
// of match, each with its score (rank, an SQL expression) — without
// reading every match. The word index alone cannot say which matches are
// newest: the plan would read every match's row (a word in one message in
// ten: a tenth of the table) to sort them, or walk the table newest first
// testing every row. So the window is read in spans of ids, newest first,
// each span's matches newest first up to what the window still lacks
// (the server combines the id range with the word index, or walks the
// span newest first); a span is never read twice, and each next span is
// as long as the matches found so far say it must be:
//
//   - the newest windowSpan windows of ids first (a common word fills its
//     window there: one query);
//   - matches found but too few: at their density the table holds under
//     half a window of them → the rest of the table (ranking them reads
//     no more rows than there are); else the span that density says
//     holds the rest of the window, with half again for margin;
//   - none found: a count of the matches, bounded at a window; none →
//     the window is empty (the count saw the whole table, in the same
//     snapshot); under a window → the rest of the table, else a span
//     seven times all read so far.
//
// The window is the same rows whatever the spans; where they end is only
// a cost. A search's cost is then bounded by the window, except for a word
// rare among the newest ids and common long before them, whose older
// matches the density misses: the rest of the table is then read, every
// one of its matches (docs/PERFORMANCE.md).
func rankedWindow(ctx context.Context, tx pgx.Tx, from, match, rank string, args []any) ([]scored, error) {
	var top int64
	if err := tx.QueryRow(ctx, "SELECT COALESCE(max(id), 0) FROM messages").Scan(&top); err != nil {
		return nil, err
	}
	window := int64(rankWindow)
	n := len(args)
	span := append(args[:n:n], int64(0), int64(0)) // lo, hi
	// One statement for every span: its limit is the whole window, and a
	// later span's matches past what the window lacks are read and
	// dropped. The score is computed outside the span's query, for the
	// rows it returns only; inside, it would be computed for every match
	// the plan reads before its sort (for a common word in the first span,
	// about 2.4 times the window). The rank expression reads m.words, as
	// the inner query names it.
	sql := fmt.Sprintf(`SELECT m.id, %s FROM (SELECT m.id, m.words FROM %s
		WHERE %s AND m.id > $%d AND m.id <= $%d ORDER BY m.id DESC LIMIT %d) m`,
		rank, from, match, n+1, n+2, window)
	var out []scored
	read := func(lo, hi int64) error {
		span[n], span[n+1] = lo, hi
		rows, err := tx.Query(ctx, sql, span...)
		if err != nil {
			return err
		}
		for rows.Next() && int64(len(out)) < window {
			var w scored
			if err := rows.Scan(&w.id, &w.rank); err != nil {
				rows.Close()
				return err
			}
			out = append(out, w)
		}
		rows.Close()
		return rows.Err()
	}
	counted := false
	for hi, lo := top, max(top-windowSpan*window, 0); ; {
		if err := read(lo, hi); err != nil {
			return nil, err
		}
		have, looked := int64(len(out)), top-lo
		if have >= window || lo == 0 {
			return out, nil
		}
		next := int64(-1) // the rest of the table
		switch {
		case have > 0:
			if have*top/looked >= window/2 {
				next = max(looked, (window-have)*looked/have*3/2)
			}
		case !counted:
			var total int64
			count := fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s WHERE %s LIMIT %d) w", from, match, window)
			if err := tx.QueryRow(ctx, count, args...).Scan(&total); err != nil {
				return nil, err
			}
			if total == 0 { // no match at all: nothing left to read
				return out, nil
			}
			if total >= window {
				counted, next = true, 7*looked
			}
		default:
			next = 7 * looked
		}
		hi, lo = lo, 0
		if next >= 0 {
			lo = max(hi-next, 0)
		}
	}
}
