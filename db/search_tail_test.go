package db

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tailCorpus is text chosen to find where a Go copy of the tokenizers
// could part from FTS5's: diacritics precomposed and combining, case
// beyond ASCII, scripts without spaces, symbols, punctuation inside
// words, FTS5 syntax, invisible characters.
var tailCorpus = []keyedMessage{
	user("cafe", "Café au lait, naïve façade"),
	user("cafe-upper", "CAFE NOIR"),
	user("cafe-nfd", "cafe\u0301 decomposed"),
	user("latin", "ǖ complex diacritic, Ångström, ø and Œuvre"),
	user("german", "Straße groß STRASSE"),
	user("turkish", "İstanbul ıi Turkish"),
	assistant("greek", "Ελληνικά ΆΈΉ άέή"),
	assistant("cyrillic", "Привет МИР мир"),
	user("fullwidth", "ＦＵＬＬＷＩＤＴＨ ｆｕｌｌ"),
	user("japanese", "日本語のテキスト検索をテストする"),
	user("chinese", "中文全文检索测试"),
	user("korean", "한국어 텍스트 검색"),
	user("thai", "ภาษาไทยการค้นหา"),
	assistant("emoji", "emoji 🎉 party 🎉🎉 rocket🚀"),
	assistant("dotted", "foo.bar gpt-4o v1.2.3 snake_case kebab-case"),
	user("langs", "C++ and C# and F#"),
	user("syntax", "NEAR AND OR NOT operators (grouped) col:value"),
	user("phrase", `quoted "phrase here" text`),
	user("short", "x ab cd ef"),
	user("digits", "numbers ١٢٣ Arabic-Indic ٤٥٦ and ①②③ circled 123"),
	user("spaces", "tab\tseparated\nnewline words"),
	user("camel", "mixedCASE CamelCase camelcase"),
	user("nbsp", "a\u00a0non-breaking space"),
	user("zwsp", "zero\u200bwidth joiner"),
	user("private", "private use \ue000\ue001 chars"),
	{"tool-shell", NewMessage{Role: RoleTool, ToolName: "shell_exec", Content: "ran ls -la in cafe dir"}},
	{"tool-web", NewMessage{Role: RoleTool, ToolName: "web.search", Content: "results for Straße"}},
	{"system", NewMessage{Role: RoleSystem, Content: "system prompt: be terse"}},
	{"call-write", NewMessage{Role: RoleAssistant, Content: "writing the file", ToolCalls: []ToolCall{
		{ID: "w1", Name: "write_file", Arguments: `{"path":"/srv/app/Straße.go","content":"package main // 日本語の引数 Café"}`},
		{ID: "w2", Name: "git.commit", Arguments: `{"message":"fix the flaky quokka test"}`}}}},
	{"call-bare", NewMessage{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "b1", Name: "list_dir", Arguments: "not json: zebra crossing"}}}},
	user("long", strings.Repeat("lorem ipsum dolor ", 300)+"needle at the end"),
}

var tailQueries = []string{
	"cafe", "café", "CAFÉ", "CAFE\u0301", "e", "naive", "façade", "noir", "decomposed",
	"ǖ", "u", "ø", "o", "œuvre", "oeuvre", "ångström", "angstrom", "ngström",
	"strasse", "straße", "groß", "gross", "istanbul", "İstanbul", "ıi", "turkish",
	"ελληνικά", "ΕΛΛΗΝΙΚΆ", "άέή", "αεη", "мир", "МИР", "привет",
	"full", "ｆｕｌｌ", "fullwidth", "日本語", "テキスト", "検索", "テスト", "中文", "检索", "文全",
	"한국어", "검색", "ภาษา", "ไทย", "🎉", "🚀", "party 🎉", "rocket",
	"foo.bar", "foo bar", `"foo bar"`, `"bar foo"`, "gpt-4o", "4o", "v1.2.3", "snake_case", "snake", "kebab-case",
	"C++", "C#", "F#", "near", "AND", "OR NOT", `"phrase here"`, `"here phrase"`, `"phrase`, "grouped", "col:value",
	"ab", "ab cd", "x", "cd ef", "123", "١٢٣", "①", "②③", "separated newline", "tab",
	"camelcase", "mixedcase", "non-breaking", "breaking space", "zero width", "zerowidth", "joiner",
	"\ue000", "private", "shell_exec", "shell", "exec", "web.search", "web", "ls -la", "la", "ran ls",
	"content:cafe", "tool_name:shell", "foo*", "^foo", "(cafe)", "lait café", "results straße",
	"system prompt", "terse", "needle", "lorem needle", "end", "dolor lorem", "ipsum dolor lorem",
	"ore", "psu", "ak", "ée", "é",
	"write_file", "write", "git.commit", "commit", "quokka", `"flaky quokka"`, `"quokka flaky"`, "flaky test",
	"srv app", "straße.go", "日本語の引数", "引数", "café main", "package", "list_dir", "zebra", `"zebra crossing"`,
	"not json", "uokk", "ebra cro", "writing quokka", "file quokka", "w1", "path",
}

// tailFixture fills a store with tailCorpus in two sessions (and a
// hidden one, and a rewound message), leaving every message queued unless
// indexedFirst of them are indexed first.
func tailFixture(t *testing.T, indexedFirst int) *searchFixture {
	t.Helper()
	f := newSearchFixture(t, Options{})
	f.s.w.ix.paused.Store(true)
	half := func(ms []keyedMessage, prefix string) []keyedMessage {
		out := make([]keyedMessage, len(ms))
		for i, km := range ms {
			out[i] = keyedMessage{prefix + km.key, km.m}
		}
		return out
	}
	first, rest := tailCorpus[:indexedFirst], tailCorpus[indexedFirst:]
	f.session(t, NewSession{ID: "s1", Source: "cli"}, half(first, "s1/")...)
	if err := f.s.IndexNow(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(rest) > 0 {
		ids, err := f.s.AppendMessages(t.Context(), "s1", messagesOf(rest))
		if err != nil {
			t.Fatal(err)
		}
		for i, km := range rest {
			f.ids["s1/"+km.key], f.key[ids[i]] = ids[i], "s1/"+km.key
		}
	}
	f.session(t, NewSession{ID: "s2", Source: "gateway"}, half(tailCorpus, "s2/")...)
	f.session(t, NewSession{ID: "hidden", Source: "cli"}, half(tailCorpus[:5], "hidden/")...)
	hideSession(t, f.s, "hidden")
	setMessageState(t, f.s, f.ids["s2/cafe"], StateRewound)
	setMessageState(t, f.s, f.ids["s2/german"], StateCompacted)
	return f
}

func messagesOf(ms []keyedMessage) []NewMessage {
	out := make([]NewMessage, len(ms))
	for i, km := range ms {
		out[i] = km.m
	}
	return out
}

// tailOptions are the filters and sorts every query runs under.
var tailOptions = map[string]SearchOptions{
	"relevance":       {Limit: MaxSearchLimit},
	"newest":          {Sort: SortNewest, Limit: MaxSearchLimit},
	"oldest":          {Sort: SortOldest, Limit: MaxSearchLimit},
	"tool role":       {Sort: SortNewest, Roles: []Role{RoleTool}, Limit: MaxSearchLimit},
	"user, assistant": {Sort: SortOldest, Roles: []Role{RoleUser, RoleAssistant}, Limit: MaxSearchLimit},
	"source":          {Sort: SortNewest, Source: "gateway", Limit: MaxSearchLimit},
	"session":         {Sort: SortOldest, SessionID: "s1", Limit: MaxSearchLimit},
}

// searchResult is what one search returned, by fixture key.
type searchResult struct {
	Route    searchRoute
	Keys     []string
	Snippets map[string]string
}

func runSearch(t *testing.T, f *searchFixture, query string, opts SearchOptions) searchResult {
	t.Helper()
	hits, route, err := f.s.search(t.Context(), query, opts)
	if err != nil {
		t.Fatalf("search %q %+v: %v", query, opts, err)
	}
	r := searchResult{Route: route, Keys: f.keys(hits), Snippets: map[string]string{}}
	for _, h := range hits {
		r.Snippets[f.key[h.MessageID]] = h.Snippet
	}
	return r
}

// Every query finds the same messages, by the same route, whether they
// wait in the queue or the indexes hold them: the tail is matched by the
// indexes' own rules. Newest and oldest return them in the same order,
// relevance the same set (queued hits come first, unranked), and the
// snippets mark the same words.
func TestSearchTail_MatchesTheIndex(t *testing.T) {
	queued := tailFixture(t, 0)
	if n := queued.s.Stats().IndexQueued; n == 0 {
		t.Fatal("nothing queued: the fixture does not test the tail")
	}
	indexed := tailFixture(t, 0)
	if err := indexed.s.IndexNow(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := indexed.s.Stats().IndexQueued; n != 0 {
		t.Fatalf("%d rows still queued after IndexNow", n)
	}
	found := 0
	for _, q := range tailQueries {
		for name, opts := range tailOptions {
			want := runSearch(t, indexed, q, opts)
			got := runSearch(t, queued, q, opts)
			found += len(want.Keys)
			if opts.Sort == SortRelevance {
				slices.Sort(want.Keys)
				slices.Sort(got.Keys)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Search(%q) %s: queued differs from indexed (-indexed +queued):\n%s", q, name, diff)
			}
		}
	}
	if found < len(tailQueries) {
		t.Errorf("only %d hits over %d queries: the corpus does not exercise matching", found, len(tailQueries))
	}
}

// A store whose older rows are indexed and newer ones queued pages
// through newest and oldest exactly as once everything is indexed: no hit
// repeated, none skipped, the same order, at every page size.
func TestSearchTail_PagesMergeExactly(t *testing.T) {
	for _, split := range []int{1, len(tailCorpus) / 2, len(tailCorpus) - 2} {
		mixed := tailFixture(t, split)
		var before []map[string][]string
		for _, q := range []string{"cafe", "straße", "the", "e", "検索", "ab", "and", "lorem"} {
			for _, sort := range []SearchSort{SortNewest, SortOldest} {
				for _, limit := range []int{1, 2, 3, 7} {
					before = append(before, map[string][]string{fmt.Sprint(q, sort, limit): pageKeys(t, mixed, q, sort, limit)})
				}
			}
		}
		if err := mixed.s.IndexNow(t.Context()); err != nil {
			t.Fatal(err)
		}
		i := 0
		for _, q := range []string{"cafe", "straße", "the", "e", "検索", "ab", "and", "lorem"} {
			for _, sort := range []SearchSort{SortNewest, SortOldest} {
				for _, limit := range []int{1, 2, 3, 7} {
					want := map[string][]string{fmt.Sprint(q, sort, limit): pageKeys(t, mixed, q, sort, limit)}
					if diff := cmp.Diff(want, before[i]); diff != "" {
						t.Errorf("split %d: paged %q %v by %d (-indexed +mixed):\n%s", split, q, sort, limit, diff)
					}
					i++
				}
			}
		}
	}
}

// pageKeys pages through every hit.
func pageKeys(t *testing.T, f *searchFixture, q string, sort SearchSort, limit int) []string {
	t.Helper()
	var out []string
	for offset := 0; ; offset += limit {
		hits, err := f.s.Search(t.Context(), q, SearchOptions{Sort: sort, Limit: limit, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			return out
		}
		out = append(out, f.keys(hits)...)
	}
}

// Relevance puts queued hits first, newest first, then the ranked ones,
// and pages through both without a repeat or a gap.
func TestSearchTail_RelevanceRanksQueuedHitsFirst(t *testing.T) {
	f := tailFixture(t, len(tailCorpus)) // s1 indexed, s2 queued
	all := pageAllKeys(t, f, "cafe", 200)
	for _, limit := range []int{1, 2, 5} {
		if diff := cmp.Diff(all, pageAllKeys(t, f, "cafe", limit)); diff != "" {
			t.Errorf("paged by %d (-one page +paged):\n%s", limit, diff)
		}
	}
	var queuedFirst []string
	for _, k := range all {
		if strings.HasPrefix(k, "s2/") {
			queuedFirst = append(queuedFirst, k)
		}
	}
	if len(queuedFirst) == 0 || !slices.Equal(all[:len(queuedFirst)], queuedFirst) {
		t.Errorf("relevance order %v: want the queued s2 hits first", all)
	}
	for i := 1; i < len(queuedFirst); i++ {
		if f.ids[queuedFirst[i-1]] < f.ids[queuedFirst[i]] {
			t.Errorf("queued hits %v: want newest first", queuedFirst)
		}
	}
}

func pageAllKeys(t *testing.T, f *searchFixture, q string, limit int) []string {
	t.Helper()
	var out []string
	for offset := 0; ; offset += limit {
		hits, err := f.s.Search(t.Context(), q, SearchOptions{Limit: limit, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			return out
		}
		out = append(out, f.keys(hits)...)
	}
}

// Appenders and searchers at once, with the indexer running: every
// acknowledged message is found by the very next Search, whether the
// indexer reached it or not.
func TestSearchTail_EveryAcknowledgedMessageFoundAtOnce(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "c")
	const appenders, each = 8, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	var misses []string
	var queuedHits int
	for a := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				word := fmt.Sprintf("tok%dx%dq", a, i)
				id, err := s.AppendMessage(t.Context(), "c", NewMessage{Role: RoleUser, Content: "said " + word + " once"})
				if err != nil {
					t.Error(err)
					return
				}
				queued := queued(t, s) > 0
				for _, q := range []string{word, word[1 : len(word)-1]} { // the word index, the trigram index
					hits, err := s.Search(t.Context(), q, SearchOptions{Sort: SortNewest, Limit: MaxSearchLimit})
					if err != nil {
						t.Error(err)
						return
					}
					if !slices.ContainsFunc(hits, func(h SearchHit) bool { return h.MessageID == id }) {
						mu.Lock()
						misses = append(misses, q)
						mu.Unlock()
					} else if queued {
						mu.Lock()
						queuedHits++
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	if len(misses) > 0 {
		t.Errorf("%d acknowledged messages not found by the next Search: %v", len(misses), misses[:min(len(misses), 10)])
	}
	st := s.Stats()
	t.Logf("%d searches while rows were queued; indexer: %d slices, %d rows", queuedHits, st.IndexSlices, st.MessagesIndexed)
	if st.MessagesIndexed == 0 {
		t.Error("the background indexer indexed nothing")
	}
}
