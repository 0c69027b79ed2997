package db

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sessiondb/sessiondb/internal/searchtext"
)

func TestSanitizeQuery(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		terms searchtext.Terms
		words string // the word index's expression
	}{
		{"Words", "deploy the cluster", searchtext.Terms{"deploy", "the", "cluster"}, `"deploy" "the" "cluster"`},
		{"Phrase", `say "hello world" twice`, searchtext.Terms{"say", "hello world", "twice"}, `"say" "hello world" "twice"`},
		{"PhraseSpacesCollapse", "\"  hello \t\n world \"", searchtext.Terms{"hello world"}, `"hello world"`},
		{"UnbalancedQuoteDropped", `"foo`, searchtext.Terms{"foo"}, `"foo"`},
		{"QuoteInsideWord", `foo"bar"`, searchtext.Terms{"foo", "bar"}, `"foo" "bar"`},
		{"ThirdQuoteDropped", `"a b" "c`, searchtext.Terms{"a b", "c"}, `"a b" "c"`},
		{"EmptyPhrase", `""`, nil, ""},
		{"PunctuationPhrase", `"(*)"`, nil, ""},
		{"OperatorsAreWords", "AND OR NOT", searchtext.Terms{"AND", "OR", "NOT"}, `"AND" "OR" "NOT"`},
		{"NearGroup", "NEAR(a b)", searchtext.Terms{"NEAR", "a", "b"}, `"NEAR" "a" "b"`},
		{"NearDistance", "a NEAR/2 b", searchtext.Terms{"a", "NEAR/2", "b"}, `"a" "NEAR/2" "b"`},
		{"Star", "*", nil, ""},
		{"Prefix", "foo*", searchtext.Terms{"foo"}, `"foo"`},
		{"Caret", "^foo", searchtext.Terms{"foo"}, `"foo"`},
		{"ColumnFilter", "content:foo", searchtext.Terms{"foo"}, `"foo"`},
		{"ToolColumnFilter", "tool_name:x", searchtext.Terms{"x"}, `"x"`},
		{"ColumnFilterNegated", "-content:foo", searchtext.Terms{"foo"}, `"foo"`},
		{"OtherColon", "error:timeout", searchtext.Terms{"error", "timeout"}, `"error" "timeout"`},
		{"Braces", "{a b}", searchtext.Terms{"a", "b"}, `"a" "b"`},
		{"Minus", "-foo", searchtext.Terms{"foo"}, `"foo"`},
		{"Plus", "+foo", searchtext.Terms{"foo"}, `"foo"`},
		{"Parens", "(", nil, ""},
		{"OnlyPunctuation", "!@#$%^&*()", nil, ""},
		{"Empty", "", nil, ""},
		{"Blank", " \t\n ", nil, ""},
		{"Dotted", "foo.bar", searchtext.Terms{"foo.bar"}, `"foo.bar"`},
		{"DottedSentenceEnd", "the end.", searchtext.Terms{"the", "end"}, `"the" "end"`},
		{"Hyphenated", "gpt-4o", searchtext.Terms{"gpt-4o"}, `"gpt-4o"`},
		{"Version", "v1.2.3", searchtext.Terms{"v1.2.3"}, `"v1.2.3"`},
		{"ABC", "a.b.c", searchtext.Terms{"a.b.c"}, `"a.b.c"`},
		{"SingleQuotes", "'single'", searchtext.Terms{"single"}, `"single"`},
		{"Apostrophe", "don't", searchtext.Terms{"don't"}, `"don't"`},
		{"Backslashes", `C:\temp\dir \\`, searchtext.Terms{"C", `temp\dir`}, `"C" "temp\dir"`},
		{"NUL", "foo\x00bar", searchtext.Terms{"foo", "bar"}, `"foo" "bar"`},
		{"InvalidUTF8", "foo\xffbar", searchtext.Terms{"foo", "bar"}, `"foo" "bar"`},
		// Only symbols: kept for substring search, nothing for the word index.
		{"Emoji", "🔥🚀", searchtext.Terms{"🔥🚀"}, ""},
		{"CJK", "検索", searchtext.Terms{"検索"}, ""},
		{"MixedCJK", "Go 言語", searchtext.Terms{"Go", "言語"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := searchtext.Sanitize(tt.in)
			if diff := cmp.Diff(tt.terms, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("searchtext.Sanitize(%q) terms (-want +got):\n%s", tt.in, diff)
			}
			if w := got.WordMatch(); w != tt.words {
				t.Errorf("wordMatch = %q, want %q", w, tt.words)
			}
		})
	}
}

func TestSanitizeQuery_Caps(t *testing.T) {
	// 2048 bytes, cut on a character boundary: 1023 × "é" (2 bytes) plus
	// one more "é" that would straddle the cap.
	long := "x" + strings.Repeat("é", 1024)
	got := searchtext.Sanitize(long)
	if len(got) != 1 || len(got[0]) != 1+2*1023 || !utf8.ValidString(got[0]) {
		t.Errorf("cut term: %d bytes, valid %v; want %d bytes", len(got[0]), utf8.ValidString(got[0]), 1+2*1023)
	}
	many := strings.Repeat("w ", 100)
	if got := searchtext.Sanitize(many); len(got) != searchtext.MaxQueryTerms {
		t.Errorf("%d terms kept, want %d", len(got), searchtext.MaxQueryTerms)
	}
}

func TestSearchTerms_TrigramMatch(t *testing.T) {
	tests := []struct {
		in, match, long, short string
	}{
		// A term's trigrams every three characters, and the last.
		{"文章を検索", `"文章を" "を検索"`, `["文章を検索"]`, `[]`},
		{"abcdefg", `"abc" "def" "efg"`, `["abcdefg"]`, `[]`},
		{"abcdef", `"abc" "def"`, `["abcdef"]`, `[]`},
		{"検索 文章を", `"文章を"`, `["文章を"]`, `["検索"]`},
		{"go 言語", "", `[]`, `["go","言語"]`},
		// Folded as the tokenizer folds: the candidates' exact test.
		{"GPT-4o ab", `"GPT" "-4o"`, `["gpt-4o"]`, `["ab"]`},
		// A trigram two terms share is asked for once.
		{"abcx abcy", `"abc" "bcx" "bcy"`, `["abcx","abcy"]`, `[]`},
	}
	for _, tt := range tests {
		match, long, short := searchtext.Sanitize(tt.in).TrigramMatch()
		if match != tt.match || long != tt.long || short != tt.short {
			t.Errorf("TrigramMatch(%q) = %q, %s, %s; want %q, %s, %s", tt.in, match, long, short, tt.match, tt.long, tt.short)
		}
	}
}

// FuzzSanitizeQuery checks that nothing a user can type makes FTS5 report
// a syntax error, through either index, that the terms are valid UTF-8
// within the caps, and that Search over a store with rows (so ranking,
// snippets and context run) answers every valid query and refuses invalid
// UTF-8 with ErrInvalidInput.
func FuzzSanitizeQuery(f *testing.F) {
	for _, seed := range []string{
		"", `"foo`, `foo"bar"`, "AND OR NOT", "*", "^foo", "content:foo", "tool_name:x",
		"NEAR(a b)", "a NEAR/2 b", "(", ")", "{a b}", "-foo", "+foo", "🔥🚀", "!@#$%^&*()",
		"\x00", "\xff\xfe", "a.b.c", "gpt-4o", "'single'", `\\ \" \`, `"a" OR "b"*`,
		`{content tool_name}: x`, "col:", `"""`, "x AND", "NOT x", "日本語の文章を検索する", "検索",
		strings.Repeat("foo bar 日本 🔥 (x) ", 300),
	} {
		f.Add(seed)
	}
	s := populatedFixture(f, Options{})
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 4*searchtext.MaxQueryBytes {
			t.Skip("past the cap, more input only slows minimisation down")
		}
		terms := searchtext.Sanitize(in)
		if len(terms) > searchtext.MaxQueryTerms {
			t.Fatalf("%d terms", len(terms))
		}
		size := 0
		for _, term := range terms {
			size += len(term)
			if term == "" || !utf8.ValidString(term) || strings.ContainsAny(term, "\"\x00") {
				t.Fatalf("bad term %q", term)
			}
		}
		if size > searchtext.MaxQueryBytes {
			t.Fatalf("%d bytes of terms from a capped query", size)
		}
		match, _, short := terms.TrigramMatch()
		var parsed []string
		if err := json.Unmarshal([]byte(short), &parsed); err != nil {
			t.Fatalf("short terms %q: %v", short, err)
		}
		for _, m := range []struct {
			index, expr string
		}{{"word", terms.WordMatch()}, {"word (all terms)", searchtext.QuoteTerms(terms)}, {"trigram", match}} {
			if m.expr == "" {
				continue
			}
			err := s.read(t.Context(), "fuzz", "", func(q genDBTX) error {
				var err error
				if m.index == "trigram" {
					_, err = queries.FTSTrigramProbe(t.Context(), q, m.expr)
				} else {
					_, err = queries.FTSProbe(t.Context(), q, m.expr)
				}
				return err
			})
			if err != nil {
				t.Fatalf("%s index: MATCH %q (from %q): %v", m.index, m.expr, in, err)
			}
		}
		opts := SearchOptions{Sort: SearchSort(len(in) % 3), Context: 1}
		hits, err := s.Search(t.Context(), in, opts)
		if !utf8.ValidString(in) {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("Search(%q) = %v, want ErrInvalidInput", in, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Search(%q, %v): %v", in, opts.Sort, err)
		}
		for _, h := range hits {
			if !utf8.ValidString(h.Snippet) || strings.ContainsAny(h.Snippet, "\x00\x02\x03") ||
				strings.Count(h.Snippet, ">>>") != strings.Count(h.Snippet, "<<<") {
				t.Fatalf("Search(%q): snippet %q (invalid, control characters, or unbalanced marks)", in, h.Snippet)
			}
		}
	})
}
