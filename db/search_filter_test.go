package db

// What a filtered search reads, pinned by the plans SQLite makes for its
// queries: the relevance window checks each match in the narrow index
// messages_search_filter, never in its messages row (migration 24), and
// every index query hands FTS5 the search's span of ids: a session's, or
// a source's of few sessions (queries/search.sql, searchPlan.span). Which rows the filters keep is
// TestSearch_RankWindowCountsVisibleMatchesOnly's subject; these tests
// keep the cost from sliding back unnoticed: a relevance search by source
// at a million messages read ~8,000 table rows (37 ms), one by session
// every match in the store (~400 ms), one by a source of one session
// every match too (200 ms; 1.2 s for a source with none, whose word
// search found nothing and went on to the trigrams).

import (
	"database/sql"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// namedQuery is the text of one query of queries/search.sql with sqlc's
// parameters as SQLite named parameters (sqlc.arg(x) → :x), for EXPLAIN.
func namedQuery(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../queries/search.sql")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "-- name: "+name+" ")
	if start < 0 {
		t.Fatalf("no query %s in queries/search.sql", name)
	}
	text = text[start:]
	if end := strings.Index(text[1:], "-- name: "); end >= 0 {
		text = text[:end+1]
	}
	return regexp.MustCompile(`sqlc\.n?arg\((\w+)\)`).ReplaceAllString(text, ":$1")
}

// queryPlan is EXPLAIN QUERY PLAN's detail lines for a query of
// queries/search.sql; args names the parameters it is given, every other
// parameter the search queries take is NULL (no filter) or a default.
func queryPlan(t *testing.T, s *Store, name string, args map[string]any) []string {
	t.Helper()
	text := namedQuery(t, name)
	defaults := map[string]any{"query": "needle", "doc_freqs": "{}", "requeued": "[]", "window_size": 2000,
		"row_limit": 20, "row_offset": 0, "long": "[]", "terms": "[]", "lo_id": 0, "hi_id": int64(math.MaxInt64)}
	var params []any
	for _, m := range regexp.MustCompile(`:(\w+)`).FindAllStringSubmatch(text, -1) {
		p := m[1]
		v, ok := args[p]
		if !ok {
			v = defaults[p]
		}
		params = append(params, sql.Named(p, v))
	}
	rows, err := s.readers.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+text, params...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", name, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

func TestSearch_FilteredWindowReadsTheFilterIndex(t *testing.T) {
	s := openTestStore(t, Options{})
	const checks = "SEARCH c USING COVERING INDEX messages_search_filter (id=?)"
	for _, filter := range []map[string]any{
		{"source": "cli"}, {"session_id": "s1"}, {"roles": `["user"]`}, {"exclude_sources": `["cron"]`}, {},
	} {
		plan := queryPlan(t, s, "MessageSearchWordsRank", filter)
		joined := strings.Join(plan, "\n")
		if !strings.Contains(joined, checks) || strings.Contains(joined, "SEARCH c USING INTEGER PRIMARY KEY") {
			t.Errorf("MessageSearchWordsRank %v: the window's checks do not read messages_search_filter alone:\n%s", filter, joined)
		}
		// The trigram window reads a candidate's text (m) only after its
		// checks (c) passed.
		if len(filter) == 0 {
			continue // no filter: MessageSearchTrigramRank reads the row it needs for the text
		}
		plan = queryPlan(t, s, "MessageSearchTrigramRankFiltered", filter)
		c, m := slices.Index(plan, checks), slices.Index(plan, "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)")
		if c < 0 || m < 0 || m < c {
			t.Errorf("MessageSearchTrigramRankFiltered %v: the checks (c) do not come before the text (m):\n%s", filter, strings.Join(plan, "\n"))
		}
	}
}

// FTS5 encodes the constraints it takes in its plan's index string: M for
// the MATCH, < and > for bounds on the rowid. Every index query takes the
// search's span so (a bound joined by OR would not reach it).
func TestSearch_IndexQueriesReadTheSearchsSpan(t *testing.T) {
	s := openTestStore(t, Options{})
	for _, name := range []string{"MessageSearchWordsRank", "MessageSearchWordsNewest", "MessageSearchWordsOldest",
		"MessageSearchTrigramRank", "MessageSearchTrigramRankFiltered", "MessageSearchTrigramNewest", "MessageSearchTrigramOldest"} {
		plan := queryPlan(t, s, name, map[string]any{"lo_id": 10, "hi_id": 20})
		bounded := false
		for _, line := range plan {
			if _, idx, ok := strings.Cut(line, " VIRTUAL TABLE INDEX "); ok && strings.HasPrefix(line, "SCAN f ") {
				bounded = strings.Contains(idx, "M") && strings.Contains(idx, "<") && strings.Contains(idx, ">")
			}
		}
		if !bounded {
			t.Errorf("%s: the index is not read between lo_id and hi_id:\n%s", name, strings.Join(plan, "\n"))
		}
	}
}
