package db

// Search under attack and under damage: hostile queries, a stale index, a
// damaged index. None of them may make Search fail.

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
				got := f.keys(hits)
				if sort == SortOldest {
					if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("Search(%q) (-want +got):\n%s", tt.query, diff)
					}
				} else if len(got) != len(tt.want) {
					t.Errorf("Search(%q) sort %v: %v, want the hits %v", tt.query, sort, got, tt.want)
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
		{"shell_exec", SearchOptions{}, []string{"tool-out"}}, // the tool name
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
