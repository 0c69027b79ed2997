package store

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/internal/rules"
)

// TestPrefixEnd holds the id-prefix bound to what the range scan needs:
// valid UTF-8 (PostgreSQL refuses anything else as text), above every id
// with the prefix, and not above ids without it that sort after.
func TestPrefixEnd(t *testing.T) {
	maxRune := string(utf8.MaxRune)
	cases := []struct{ prefix, want string }{
		{"abc", "abd"},
		{"a", "b"},
		{"ses-\u00e9", "ses-\u00ea"},
		{"x\u007f", "x\u0080"}, // one byte becomes two
		{"x\u07ff", "x\u0800"}, // two become three
		{"x\uD7FF", "x\uE000"}, // skips the surrogates
		{"x\uffff", "x\U00010000"},
		{"a" + maxRune, "b"}, // carries
		{"ab" + maxRune + maxRune, "ac"},
	}
	for _, c := range cases {
		got := prefixEnd(c.prefix)
		if got != c.want {
			t.Errorf("prefixEnd(%q) = %q, want %q", c.prefix, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("prefixEnd(%q) = %q: not valid UTF-8", c.prefix, got)
		}
		for _, id := range []string{c.prefix, c.prefix + "z", c.prefix + maxRune} {
			if !(id >= c.prefix && id < got) {
				t.Errorf("id %q is outside [%q, %q)", id, c.prefix, got)
			}
		}
	}
	all := strings.Repeat(maxRune, 3)
	longest := strings.Repeat(maxRune, rules.MaxIDLen/utf8.UTFMax)
	if got := prefixEnd(all); !utf8.ValidString(got) || longest >= got || all >= got {
		t.Errorf("prefixEnd(%q) = %q does not bound the longest id with the prefix", all, got)
	}
}
