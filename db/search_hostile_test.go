package db

// Search under attack and under damage: hostile queries, a stale index, a
// damaged index. None of them may make Search fail.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ncruces/go-sqlite3"
)

// hostileFixture holds text for the hostile queries to find.
func hostileFixture(t *testing.T, opts Options) *searchFixture {
	f := newSearchFixture(t, opts)
	f.session(t, NewSession{ID: "h"},
		user("foo", "foo is a word"),
		user("foobar", "foo bar baz"),
		user("abc", "path a.b.c resolved"),
		user("gpt", "model gpt-4o answered"),
		user("single", "a 'single' quoted word"),
		user("back", `C:\temp\dir has backslashes`),
		user("fire", "launch 🔥🚀 now"),
		user("near", "near the end"),
		user("ops", "this AND that or not"),
	)
	return f
}

var hostileQueries = []struct {
	name, query string
	want        []string // with the index; nil: no hits
	err         error    // only invalid UTF-8 is refused
}{
	{"UnbalancedQuote", `"foo`, []string{"foo", "foobar"}, nil},
	{"QuoteInsideWord", `foo"bar"`, []string{"foobar"}, nil},
	{"Operators", "AND OR NOT", []string{"ops"}, nil},
	{"Star", "*", nil, nil},
	{"Caret", "^foo", []string{"foo", "foobar"}, nil},
	{"ContentColumn", "content:foo", []string{"foo", "foobar"}, nil},
	{"ToolNameColumn", "tool_name:x", nil, nil},
	{"NearGroup", "NEAR(a b)", nil, nil},
	{"NearDistance", "a NEAR/2 b", nil, nil},
	{"OpenParen", "(", nil, nil},
	{"CloseParen", ")", nil, nil},
	{"ColumnSet", "{a b}", []string{"abc"}, nil},
	{"Minus", "-foo", []string{"foo", "foobar"}, nil},
	{"Plus", "+foo", []string{"foo", "foobar"}, nil},
	{"Emoji", "🔥🚀", []string{"fire"}, nil},
	{"TenKBMixed", strings.Repeat("foo bar 日本 🔥 (x) NEAR/3 \"q ", 400), nil, nil},
	{"Empty", "", nil, nil},
	{"OnlyPunctuation", "!@#$%^&*()", nil, nil},
	{"NULByte", "foo\x00bar", []string{"foobar"}, nil},
	{"OnlyNUL", "\x00", nil, nil},
	{"InvalidUTF8", "foo\xff\xfe", nil, ErrInvalidInput},
	{"Dotted", "a.b.c", []string{"abc"}, nil},
	{"Hyphenated", "gpt-4o", []string{"gpt"}, nil},
	{"SingleQuoted", "'single'", []string{"single"}, nil},
	{"Backslashes", `C:\temp\dir`, []string{"back"}, nil},
	{"OnlyBackslashes", `\\\`, nil, nil},
	{"EmptyPhrase", `""`, nil, nil},
	{"TrailingOperator", "foo AND", nil, nil},
}

func TestSearch_HostileQueries(t *testing.T) {
	f := hostileFixture(t, Options{})
	for _, tt := range hostileQueries {
		t.Run(tt.name, func(t *testing.T) {
			for _, sort := range []SearchSort{SortRelevance, SortNewest, SortOldest} {
				hits, err := f.s.Search(t.Context(), tt.query, SearchOptions{Sort: sort, Context: 1})
				if !errors.Is(err, tt.err) || (err != nil) != (tt.err != nil) {
					t.Fatalf("Search(%q) sort %v: error %v, want %v", tt.query, sort, err, tt.err)
				}
				// want is oldest first: newest is its reverse, relevance the
				// same rows in its own order.
				want, got := slices.Clone(tt.want), f.keys(hits)
				switch sort {
				case SortNewest:
					slices.Reverse(want)
				case SortRelevance:
					slices.Sort(want)
					slices.Sort(got)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Search(%q) sort %v (-want +got):\n%s", tt.query, sort, diff)
				}
			}
		})
	}
}

// Without the index, a hostile query is still never an error.
func TestSearch_HostileQueriesWithoutIndex(t *testing.T) {
	f := hostileFixture(t, Options{Logger: testLogger(new(bytes.Buffer))})
	if err := f.s.SetMeta(t.Context(), metaFTSStale, "1"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range hostileQueries {
		hits, route, err := f.s.search(t.Context(), tt.query, SearchOptions{Context: 1})
		if !errors.Is(err, tt.err) || (err != nil) != (tt.err != nil) {
			t.Errorf("Search(%q): error %v, want %v", tt.query, err, tt.err)
		}
		if len(hits) > 0 && route != routeScan {
			t.Errorf("Search(%q): route %d, want the scan", tt.query, route)
		}
	}
}

func TestSearch_StaleIndexScans(t *testing.T) {
	var logs bytes.Buffer
	f := conversationFixture(t, Options{Logger: testLogger(&logs)})
	if err := f.s.SetMeta(t.Context(), metaFTSStale, "1"); err != nil {
		t.Fatal(err)
	}
	// A write still succeeds (the triggers stand down) and is found.
	if _, err := f.s.AppendMessage(t.Context(), "s2", NewMessage{Role: RoleUser, Content: "kubectl after the index went stale"}); err != nil {
		t.Fatalf("append with a stale index: %v", err)
	}
	tests := []struct {
		query string
		opts  SearchOptions
		want  []string
	}{
		{"kubectl", SearchOptions{Sort: SortOldest}, []string{"k8s-answer", "logs", ""}},
		{"kubectl", SearchOptions{}, []string{"", "logs", "k8s-answer"}}, // relevance: newest first
		{"KUBECTL", SearchOptions{SessionID: "s2", Limit: 1}, []string{""}},
		{"kubectl", SearchOptions{Roles: []Role{RoleAssistant}, Source: "gateway"}, []string{"logs"}},
		{"shell_exec", SearchOptions{}, []string{"tool-out", "k8s-answer"}}, // the tool name, and the call's name
		{"cmd", SearchOptions{}, []string{"k8s-answer"}},                    // a word of the call's arguments
		{"zanzibar", SearchOptions{}, []string{"compacted"}},
		{"検索", SearchOptions{}, []string{"cjk"}},
		{"kubectl", SearchOptions{Sort: SortOldest, Offset: 1, Limit: 1}, []string{"logs"}},
	}
	for _, tt := range tests {
		logs.Reset()
		hits, route, err := f.s.search(t.Context(), tt.query, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, f.keys(hits)); diff != "" {
			t.Errorf("Search(%q, %+v) (-want +got):\n%s", tt.query, tt.opts, diff)
		}
		if route != routeScan {
			t.Errorf("Search(%q): route %d, want the scan", tt.query, route)
		}
		if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "stale") {
			t.Errorf("Search(%q) logged %d warnings, want 1 about the stale index: %q", tt.query, n, logs.String())
		}
	}
}

func TestSearch_DamagedIndexScans(t *testing.T) {
	path := filledStore(t)
	damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id > 10",
		"UPDATE messages_fts_trigram_data SET block = zeroblob(length(block)) WHERE id > 10")
	var logs bytes.Buffer
	s, err := Open(t.Context(), path, Options{Logger: testLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The index reads as damaged...
	err = s.read(t.Context(), "probe", "", func(q genDBTX) error {
		_, err := queries.FTSProbe(t.Context(), q, `"fado"`)
		return err
	})
	if !isFTSDamage(err) {
		t.Fatalf("probe of the damaged index = %v, want FTS damage", err)
	}
	// ...and search scans instead, every message still found.
	hits, route, err := s.search(t.Context(), "fado", SearchOptions{Limit: MaxSearchLimit, SessionID: "b"})
	if err != nil {
		t.Fatalf("search over a damaged index: %v", err)
	}
	if len(hits) != 200 || route != routeScan {
		t.Errorf("%d hits by route %d, want 200 by the scan", len(hits), route)
	}
	if !strings.Contains(logs.String(), "damaged") || strings.Count(logs.String(), "level=WARN") != 1 {
		t.Errorf("want one warning about the damage, got %q", logs.String())
	}
}

// Every kind of damage to the index tables degrades to the scan: whatever
// the driver reports (CORRUPT_VTAB, CORRUPT, or a plain error such as
// "invalid fts5 file format"), Search answers, with one warning.
func TestSearch_DamagedIndexKindsScan(t *testing.T) {
	kinds := []struct{ name, stmt string }{
		{"DataRowsDeleted", "DELETE FROM messages_fts_data WHERE id > 10"},
		{"StructureZeroed", "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id = 10"},
		{"AveragesGone", "DELETE FROM messages_fts_data WHERE id = 1"},
		{"ConfigVersion", "UPDATE messages_fts_config SET v = 99 WHERE k = 'version'"},
		{"IdxEmptied", "DELETE FROM messages_fts_idx"},
		{"DocsizeEmptied", "DELETE FROM messages_fts_docsize"},
		{"TrigramDataZeroed", "UPDATE messages_fts_trigram_data SET block = zeroblob(length(block)) WHERE id > 10"},
	}
	filled := filledStore(t)
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			path := copyStore(t, filled)
			damage(t, path, k.stmt)
			var logs bytes.Buffer
			s, err := Open(t.Context(), path, Options{Logger: testLogger(&logs)})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			// Every message holds every word: each search fills a page.
			for _, q := range []string{"fado", "ado", "fa", "fado alfama"} { // words, trigram, scan, words
				for _, o := range []SearchOptions{{}, {Sort: SortNewest, Source: "test"}} {
					logs.Reset()
					o.Limit = MaxSearchLimit
					hits, route, err := s.search(t.Context(), q, o)
					if err != nil {
						t.Errorf("Search(%q, %+v): %v", q, o, err)
						continue
					}
					if len(hits) != MaxSearchLimit {
						t.Errorf("Search(%q, %+v): %d hits by route %d, want %d", q, o, len(hits), route, MaxSearchLimit)
					}
					// A scan because of the damage says so once; "fa" (too short
					// for a trigram) scans by design, silently.
					warnings := strings.Count(logs.String(), "level=WARN")
					if warnings > 1 || warnings == 1 && route != routeScan {
						t.Errorf("Search(%q, %+v): route %d and %d warnings: %q", q, o, route, warnings, logs.String())
					}
				}
			}
		})
	}
}

// scanInstead: any driver error from the full-text route degrades to the
// scan, but not the search's own end (cancellation, interrupt, Close) and
// not an error that is not the driver's.
func TestScanInstead(t *testing.T) {
	s := openTestStore(t, Options{})
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"None", t.Context(), nil, false},
		{"CorruptVTab", t.Context(), sqlite3.CORRUPT_VTAB, true},
		{"Corrupt", t.Context(), fmt.Errorf("step: %w", sqlite3.CORRUPT), true},
		{"PlainError", t.Context(), sqlite3.ERROR, true},
		{"Mapped", t.Context(), mapDriverError(sqlite3.CORRUPT), true},
		{"Interrupt", t.Context(), sqlite3.INTERRUPT, false},
		{"Busy", t.Context(), fmt.Errorf("step: %w", sqlite3.BUSY), false},
		{"LockedExtended", t.Context(), sqlite3.LOCKED_SHAREDCACHE, false},
		{"CorruptExtended", t.Context(), sqlite3.CORRUPT_INDEX, true},
		{"Canceled", t.Context(), context.Canceled, false},
		{"Deadline", t.Context(), fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{"CtxDoneDriverError", cancelled, sqlite3.CORRUPT, false},
		{"Closed", t.Context(), ErrClosed, false},
		{"ConnDone", t.Context(), sql.ErrConnDone, false},
		{"NotTheDriver", t.Context(), errors.New("something else"), false},
	}
	for _, tt := range tests {
		if got := s.scanInstead(tt.ctx, tt.err); got != tt.want {
			t.Errorf("%s: scanInstead(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
	s.Close()
	if s.scanInstead(t.Context(), sqlite3.CORRUPT) {
		t.Error("a closed store's error degraded to the scan")
	}
}

// populatedQueries: combining marks, joiners, bidi marks, replacement
// characters, FTS5 syntax, unsegmented scripts, case-folding oddities,
// symbols, full-width forms, and (below) many terms and queries at the
// byte cap.
var populatedQueries = []string{
	"\u0301", "e\u0301", "cafe\u0301", "a\u200db", "\u200d", "\u200f\u05e9\u05dc\u05d5\u05dd", "\ufffd", "\ufffd\ufffd\ufffd",
	"\x00", "\"", "\"\"", "\"\"\"", "NEAR/3", "^", "*", "\\", "\\\\\"\\", "+++", "¿¡", "¿hola?", "«»",
	"日本 kubernetes", "Go言語", "言語 go", "kubernetes言語", "한국어 텍스트", "ไทย", "$$$", "€€€", "€", "ǅ",
	"ß", "İstanbul", "ΣΊΣΥΦΟΣ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "１２３", "²³", "Ⅻ", "\U000F0000\U000F0001", "\U0001F600",
	"\"a\" OR \"b\"", "content:", ":", "content:content:foo", "tool_name:\"x y\"", "NEAR(\"a\" \"b\", 3)",
	"a-", "-", "--", "a--b", "'", "''", "x'y", ".", "..", "...", "a.", ".a", "%", "_", "%_%",
	"\u3000全角\u3000", "ｋｕｂｅ", "ﾃｽﾄ", "\u00a0nbsp\u00a0", "\u2028line\u2029", "\ufeffbom",
	"\U000E0001tag", "a\u0300\u0301\u0302\u0303", "\u0e01\u0e34\u0e19", "x\x7fy", "\x1b[31mred",
}

func init() { // the long populated queries: many terms, the byte cap
	var many strings.Builder
	for i := range 300 {
		fmt.Fprintf(&many, "t%d ", i)
	}
	// One 2047-byte word, so the cap (2048) cuts the character after it.
	// Not one letter repeated: a trigram phrase of one trigram 2045 times
	// costs seconds under -race.
	long := strings.Repeat("abcdefghijklmnopqrstuvwxyz", 79)[:2047]
	populatedQueries = append(populatedQueries, many.String(), long+"é", long+"日本", long+`"x"`, `"`+long+`"`,
		strings.Repeat("日本語の", 175), strings.Repeat("ab 日本 ", 100))
}

// populatedFixture stores each populated query inside a user message and a
// long tool message, over two sessions.
func populatedFixture(t testing.TB, opts Options) *Store {
	s := openTestStore(t, opts)
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(t.Context(), NewSession{ID: id, Source: "src" + id}); err != nil {
			t.Fatal(err)
		}
	}
	var ms []NewMessage
	for i, q := range populatedQueries {
		c := strings.ToValidUTF8(strings.ReplaceAll(q, "\x00", " "), " ")
		ms = append(ms, NewMessage{Role: RoleUser, Content: fmt.Sprintf("msg %d: %s and ab kubernetes 日本語の文章 \x02 ctl \x03 x", i, c)})
		ms = append(ms, NewMessage{Role: RoleTool, ToolName: "shell_exec", ToolCallID: fmt.Sprint("c", i), Content: strings.Repeat("é日", 100) + c})
	}
	if _, err := s.AppendMessages(t.Context(), "a", ms[:len(ms)/2]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(t.Context(), "b", ms[len(ms)/2:]); err != nil {
		t.Fatal(err)
	}
	return s
}

// Hostile queries against a store holding them (and the highlight
// sentinels, control characters, long accented text): every route, sort,
// filter and context size answers without error, with valid UTF-8
// snippets and context.
func TestSearch_HostileQueriesPopulated(t *testing.T) {
	every := []SearchOptions{ // every sort, filter and paging option
		{}, {Source: "srca", Context: 5, Limit: 200},
		{Roles: []Role{RoleTool}, SessionID: "b", Sort: SortNewest, Context: 2, Offset: 1}, {Sort: SortOldest, Offset: 3},
	}
	for _, mode := range []struct {
		name  string
		stale bool
		opts  []SearchOptions
	}{
		{"Index", false, every},
		{"Stale", true, every[1:2]}, // the scan has one shape: the widest
	} {
		t.Run(mode.name, func(t *testing.T) {
			s := populatedFixture(t, Options{Logger: testLogger(io.Discard)})
			if mode.stale {
				if err := s.SetMeta(t.Context(), metaFTSStale, "1"); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range populatedQueries {
				opts := mode.opts
				if len(q) > 256 { // costly (a trigram per character): the widest only
					opts = every[1:2]
				}
				for _, o := range opts {
					hits, route, err := s.search(t.Context(), q, o)
					if err != nil {
						t.Errorf("Search(%q, %+v): %v", q, o, err)
						continue
					}
					for _, h := range hits {
						if !utf8.ValidString(h.Snippet) || strings.ContainsAny(h.Snippet, "\x00\x02\x03") ||
							strings.Count(h.Snippet, ">>>") != strings.Count(h.Snippet, "<<<") {
							t.Errorf("Search(%q) route %d: snippet %q (invalid, control characters, or unbalanced marks)", q, route, h.Snippet)
						}
						for _, c := range append(h.Before, h.After...) {
							if !utf8.ValidString(c.Content) {
								t.Errorf("Search(%q) route %d: context %q", q, route, c.Content)
							}
						}
					}
				}
			}
		})
	}
}
