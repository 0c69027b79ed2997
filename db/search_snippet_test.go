package db

import (
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/sessiondb/sessiondb/internal/searchtext"
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
				plain := strings.NewReplacer(searchtext.MarkOpen, "", searchtext.MarkClose, "", "...", "").Replace(s)
				if n := utf8.RuneCountInString(plain); n > searchtext.SnippetLen {
					t.Errorf("snippet of %d characters, want at most %d: %q", n, searchtext.SnippetLen, s)
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
		got, ok := searchtext.WordSnippet(tt.text, searchtext.Sanitize(tt.query))
		got, _ = searchtext.PublishSnippet(got)
		if got != tt.want || ok != tt.ok {
			t.Errorf("searchtext.WordSnippet(%q, %q) = %q, %v; want %q, %v", tt.text, tt.query, got, ok, tt.want, tt.ok)
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
		got, ok := searchtext.SubstringSnippet(tt.text, searchtext.Sanitize(tt.query))
		got, _ = searchtext.PublishSnippet(got)
		if got != tt.want || ok != tt.ok {
			t.Errorf("searchtext.SubstringSnippet(%q, %q) = %q, %v; want %q, %v", tt.text, tt.query, got, ok, tt.want, tt.ok)
		}
	}
}

// Text holding the control characters older versions used as highlight
// marks (\x02, \x03) gets no false marks: the word index's marks are bytes
// that UTF-8 text cannot hold.
func TestSearch_SnippetIgnoresMarkLookalikes(t *testing.T) {
	f := newSearchFixture(t, Options{})
	f.session(t, NewSession{ID: "m"},
		user("ctl", "junk \x02 marker \x03 text then un café noir"),
		user("fake", "<<<not>>> a \x02cafe\x03 match"))
	hits, route, err := f.s.search(t.Context(), "café", SearchOptions{Sort: SortOldest})
	if err != nil || route != routeWords {
		t.Fatalf("route %d, %v", route, err)
	}
	got := map[string]string{}
	for _, h := range hits {
		got[f.key[h.MessageID]] = h.Snippet
	}
	// "cafe" in the second message is found by the index (diacritics
	// folded), which WordSnippet's quick scan does not do: its snippet
	// comes from WordHighlight, by the index's rules.
	want := map[string]string{
		"ctl":  "junk marker text then un >>>café<<< noir",
		"fake": "<<<not>>> a >>>cafe<<< match",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snippets (-want +got):\n%s", diff)
	}
}

func TestHighlightSnippet(t *testing.T) {
	o, c := "\xff", "\xfe" // hlOpen, hlClose
	long := strings.Repeat("lorem ", 20)
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"a " + o + "café" + c + " b", "a >>>café<<< b", true},
		{"\x02x\x03 " + o + "y" + c, "x >>>y<<<", true},
		{long + o + "needle" + c + " " + long + o + "needle" + c + " " + long,
			"...rem lorem lorem lorem lorem lorem lorem >>>needle<<< lorem lorem lorem lorem lorem lorem lorem lorem lorem lorem lorem lorem l...", true},
		{"nothing marked", "nothing marked", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := searchtext.HighlightSnippet(tt.in)
		got, _ = searchtext.PublishSnippet(got)
		if got != tt.want || ok != tt.ok {
			t.Errorf("searchtext.HighlightSnippet(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// A snippet costs its window, not its message: on a message of megabytes
// the snippet functions allocate a few kilobytes, wherever the match is
// (building one used to decode the whole message: 33 MB for 1.2 MB).
func TestSnippet_CostIsBoundedByTheWindow(t *testing.T) {
	filler := strings.Repeat("lorem ipsum dolor ", (2<<20)/18)
	first, last := "needle "+filler, filler+" needle"
	marked := filler + "\xffneedle\xfe " + filler
	terms := searchtext.Sanitize("needle")
	tests := []struct {
		name string
		fn   func() (string, bool)
		ok   bool
	}{
		{"WordsFirst", func() (string, bool) { return searchtext.WordSnippet(first, terms) }, true},
		{"WordsLast", func() (string, bool) { return searchtext.WordSnippet(last, terms) }, true},
		{"WordsNone", func() (string, bool) { return searchtext.WordSnippet(filler, terms) }, false},
		{"SubstringFirst", func() (string, bool) { return searchtext.SubstringSnippet(first, terms) }, true},
		{"SubstringLast", func() (string, bool) { return searchtext.SubstringSnippet(last, terms) }, true},
		{"SubstringNone", func() (string, bool) { return searchtext.SubstringSnippet(filler, terms) }, false},
		{"HighlightMiddle", func() (string, bool) { return searchtext.HighlightSnippet(marked) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snip, ok := tt.fn()
			snip, _ = searchtext.PublishSnippet(snip)
			if ok != tt.ok || !utf8.ValidString(snip) || utf8.RuneCountInString(snip) > searchtext.SnippetLen+20 {
				t.Fatalf("snippet %q, %v; want ok %v and a valid snippet", snip, ok, tt.ok)
			}
			if ok && !strings.Contains(snip, searchtext.MarkOpen+"needle"+searchtext.MarkClose) {
				t.Errorf("snippet %q does not mark the match", snip)
			}
			if n := allocatedBytes(func() { tt.fn() }, 2); n > 16<<10 {
				t.Errorf("%d bytes allocated for the snippet of a %d-byte message, want at most 16 KiB", n, len(filler))
			}
		})
	}
}

// allocatedBytes returns the bytes fn allocates per run, averaged over n.
func allocatedBytes(fn func(), n int) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		fn()
	}
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc-before.TotalAlloc) / int64(n)
}

func BenchmarkWordSnippet1MB(b *testing.B) {
	text := "needle " + strings.Repeat("lorem ipsum dolor ", 1<<16) // ~1.2 MB, the match at the start
	terms := searchtext.Sanitize("needle")
	b.ReportAllocs()
	for b.Loop() {
		searchtext.WordSnippet(text, terms)
	}
}

// Marks are the matches only: stored text that holds the markers itself
// (">>>fake<<<") is shown as text and never reported as a match, on the
// word index, the trigram index and the scan alike.
func TestSearch_MarksCannotBeFakedByStoredText(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "m")
	const text = "see >>>fake<<< and the real needle here, then a stray <<< and >>>"
	if _, err := s.AppendMessage(t.Context(), "m", NewMessage{Role: RoleUser, Content: text}); err != nil {
		t.Fatal(err)
	}
	routes := map[searchRoute]bool{}
	for _, stale := range []bool{false, true} { // the indexes; the scan
		if stale {
			if err := s.SetMeta(t.Context(), metaFTSStale, "1"); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range []string{"needle", "eedl"} { // a word; a substring (trigram)
			hits, route, err := s.search(t.Context(), q, SearchOptions{})
			if err != nil || len(hits) != 1 {
				t.Fatalf("search(%q) route %d: %v, %v", q, route, hits, err)
			}
			routes[route] = true
			h := hits[0]
			var got []string
			for _, m := range h.Marks {
				got = append(got, h.Snippet[m.Start:m.End])
				if h.Snippet[m.Start-len(searchtext.MarkOpen):m.Start] != searchtext.MarkOpen || h.Snippet[m.End:m.End+len(searchtext.MarkClose)] != searchtext.MarkClose {
					t.Errorf("search(%q) route %d: mark %v of %q is not between the markers", q, route, m, h.Snippet)
				}
			}
			if diff := cmp.Diff([]string{q}, got); diff != "" || !strings.Contains(h.Snippet, ">>>fake<<<") {
				t.Errorf("search(%q) route %d: snippet %q marks (-want +got):\n%s", q, route, h.Snippet, diff)
			}
		}
	}
	if len(routes) != 3 {
		t.Errorf("routes taken %v, want the word index, the trigram index and the scan", routes)
	}
}
