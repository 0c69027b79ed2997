package ui

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessiondb/sessiondb/store"
)

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\nlines":     "plain\ttext\nlines",
		"\x1b[31mred\x1b[0m":     "␛[31mred␛[0m",
		"nul\x00bell\x07del\x7f": "nul␀bell␇del␡",
		"\u202Eevil\u202C":       "⟨U+202E⟩evil⟨U+202C⟩",
		"iso\u2066late\u2069":    "iso⟨U+2066⟩late⟨U+2069⟩",
		"c1\u0085":               "c1⟨U+0085⟩",
		"bad\xffutf8":            "bad⟨0xff⟩utf8",
		"emoji 👩‍💻 stays":        "emoji 👩‍💻 stays", // the ZWJ is a format character, not a bidi control
		"עברית and العربية":      "עברית and العربية",
	} {
		if got := visible(in); got != want {
			t.Errorf("visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSegments(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []segment
	}{
		{"just prose", []segment{{Text: "just prose"}}},
		{"before\n```go\nx := 1\n```\nafter", []segment{{Text: "before"}, {Code: true, Lang: "go", Text: "x := 1"}, {Text: "after"}}},
		{"```\nunclosed\ncode", []segment{{Code: true, Text: "unclosed\ncode"}}},
		{"```\n```", []segment{{Code: true}}},
		{"a ``` inside a line", []segment{{Text: "a ``` inside a line"}}},
		{"```<script>\n\x1b\n```", []segment{{Code: true, Lang: "<script>", Text: "␛"}}},
		{"", nil},
	} {
		if diff := cmp.Diff(tt.want, segments(tt.in)); diff != "" {
			t.Errorf("segments(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestInlineImage(t *testing.T) {
	for u, want := range map[string]bool{
		"data:image/png;base64,iVBORw0KGgo=":        true,
		"data:IMAGE/JPEG;BASE64,/9j/":               true,
		"data:image/svg+xml;base64,PHN2Zy8+":        false, // SVG can carry script
		"data:image/png,rawbytes":                   false, // not base64
		"data:image/png;base64,not base64!":         false,
		"data:text/html;base64,PHNjcmlwdD4=":        false,
		"https://example.com/a.png":                 false, // remote: a link, never fetched
		"javascript:alert(1)":                       false,
		"data:image/png;base64,iVBO\"onerror=x.png": false,
	} {
		if got := inlineImage(u); got != want {
			t.Errorf("inlineImage(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestSnippetRuns(t *testing.T) {
	// Marks come from the store; a stored ">>>" in the text is only text.
	snippet := "a >>>b<<< c >>>x<<< d >>> e"
	marks := []store.Mark{{Start: 5, End: 6}, {Start: 15, End: 16}}
	want := []snippetRun{{Text: "a "}, {Text: "b", Match: true}, {Text: " c "}, {Text: "x", Match: true}, {Text: " d >>> e"}}
	if diff := cmp.Diff(want, snippetRuns(snippet, marks)); diff != "" {
		t.Errorf("snippetRuns (-want +got):\n%s", diff)
	}
	// Marks that do not fit the snippet are ignored, not a panic.
	bad := []store.Mark{{Start: 50, End: 60}, {Start: 3, End: 1}}
	if diff := cmp.Diff([]snippetRun{{Text: "abc"}}, snippetRuns("abc", bad)); diff != "" {
		t.Errorf("snippetRuns with bad marks (-want +got):\n%s", diff)
	}
}
