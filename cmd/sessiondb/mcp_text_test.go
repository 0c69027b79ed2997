package main

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestInert(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"code:\n\tif x {\n\t\treturn\n\t}", "code:\n\tif x {\n\t\treturn\n\t}"},
		{"    indented\r\nwindows", "    indented\nwindows"},
		{"\x1b[31mred\x1b[0m text", "red text"},
		{"title \x1b]0;pwned\x07 bell", "title  bell"},
		{"c1 \u009b31m csi \u009d0;x\u009c osc", "c1  csi  osc"},
		{"nul\x00 del\x7f bs\x08 nel\u0085 cr\r", "nul  del  bs  nel  cr "},
		{"bad \xff byte", "bad   byte"},
		{"cut short \x1b[31", "cut short "},
		{"kept: 日本語 é 🔥 \ufffd", "kept: 日本語 é 🔥 \ufffd"},
	}
	for _, tt := range tests {
		if got := inertText(tt.in); got != tt.want {
			t.Errorf("inertText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Whatever the input, the output is valid UTF-8 with no control
// character but newline and tab.
func FuzzInert(f *testing.F) {
	for _, s := range []string{"\x1b[2J", "a\x1b]0;t\x07b", "\u009b\xff\r\n", "\t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := inertText(s)
		if !utf8.ValidString(out) {
			t.Fatalf("inertText(%q) = %q: invalid UTF-8", s, out)
		}
		if i := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }); i >= 0 {
			t.Fatalf("inertText(%q) = %q: control at %d", s, out, i)
		}
	})
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"exactly10!", 10, "exactly10!", false},
		{"abcdef", 3, "abc", true},
		{"日本語", 4, "日", true}, // never half a rune
		{"日本語", 2, "", true},
	}
	for _, tt := range tests {
		got, cut := clip(tt.in, tt.max)
		if got != tt.want || cut != tt.cut {
			t.Errorf("clip(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, cut, tt.want, tt.cut)
		}
	}
}
