package db

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestSearch_Snippet(t *testing.T) {
	f := newSearchFixture(t, Options{})
	long := strings.Repeat("lorem ", 20) + "needle\n\n" + strings.Repeat("ipsum ", 30)
	f.session(t, NewSession{ID: "n"}, user("long", long), user("short", "a short needle"),
		user("accent", "un café au lait, s'il vous plaît"))
	tests := []struct {
		name, query string
		route       searchRoute
		want        map[string]string
	}{
		{"Words", "needle", routeWords, map[string]string{
			"long":  "...rem lorem lorem lorem lorem lorem lorem >>>needle<<< ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum...",
			"short": "a short >>>needle<<<",
		}},
		// The word index folds diacritics; the snippet marks what it matched.
		{"WordsDiacritics", "CAFE plait", routeWords, map[string]string{
			"accent": "un >>>café<<< au lait, s'il vous >>>plaît<<<",
		}},
		{"Trigram", "EEDL", routeTrigram, map[string]string{
			"long":  "...em lorem lorem lorem lorem lorem lorem n>>>eedl<<<e ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum i...",
			"short": "a short n>>>eedl<<<e",
		}},
		{"Scan", "ee", routeScan, map[string]string{
			"long":  "...em lorem lorem lorem lorem lorem lorem n>>>ee<<<dle ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum ipsum i...",
			"short": "a short n>>>ee<<<dle",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, route, err := f.s.search(t.Context(), tt.query, SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if route != tt.route {
				t.Errorf("route %d, want %d", route, tt.route)
			}
			got := map[string]string{}
			for _, h := range hits {
				got[f.key[h.MessageID]] = h.Snippet
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("snippets (-want +got):\n%s", diff)
			}
			for _, s := range got {
				plain := strings.NewReplacer(markOpen, "", markClose, "", "...", "").Replace(s)
				if n := utf8.RuneCountInString(plain); n > snippetLen {
					t.Errorf("snippet of %d characters, want at most %d: %q", n, snippetLen, s)
				}
			}
		})
	}
}

func TestWordSnippet(t *testing.T) {
	tests := []struct {
		text, query, want string
		ok                bool
	}{
		{"errors are not an error", "error", "errors are not an >>>error<<<", true},
		{"call os.ReadFile(path) or os readfile", "os.ReadFile", "call >>>os.ReadFile<<<(path) or >>>os readfile<<<", true},
		{"crashing the pods, pods crashing", `"pods crashing"`, "crashing the pods, >>>pods crashing<<<", true},
		{"Straße und STRASSE", "straße", ">>>Straße<<< und STRASSE", true},
		{"no match here", "absent", "no match here", false},
		{"", "x", "", false},
	}
	for _, tt := range tests {
		got, ok := wordSnippet(tt.text, sanitizeQuery(tt.query))
		if got != tt.want || ok != tt.ok {
			t.Errorf("wordSnippet(%q, %q) = %q, %v; want %q, %v", tt.text, tt.query, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSubstringSnippet(t *testing.T) {
	tests := []struct {
		text, query, want string
		ok                bool
	}{
		{"Kubernetes and KUBECTL", "kube", ">>>Kube<<<rnetes and >>>KUBE<<<CTL", true},
		{"ΣΊΣΥΦΟΣ σίσυφος", "σίσυφος", ">>>ΣΊΣΥΦΟΣ<<< >>>σίσυφος<<<", true},
		{"日本語の文章を検索する", "検索 文章", "日本語の>>>文章<<<を>>>検索<<<する", true},
		{"tabs\tand\n\nnewlines collapse", "and", "tabs >>>and<<< newlines collapse", true},
		{"nothing", "zz", "nothing", false},
	}
	for _, tt := range tests {
		got, ok := substringSnippet(tt.text, sanitizeQuery(tt.query))
		if got != tt.want || ok != tt.ok {
			t.Errorf("substringSnippet(%q, %q) = %q, %v; want %q, %v", tt.text, tt.query, got, ok, tt.want, tt.ok)
		}
	}
}
