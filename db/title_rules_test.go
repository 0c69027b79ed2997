package db

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/internal/rules"
)

// Each character class the title rules name, on its own.
func TestSanitizeTitle(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"Plain", "Fix the build", "Fix the build"},
		{"SurroundingSpace", "  Fix the build \t", "Fix the build"},
		{"WhitespaceRunsCollapse", "Fix \t the\n\nbuild", "Fix the build"},
		{"NoBreakAndIdeographicSpace", "Fix\u00a0the\u3000build", "Fix the build"},
		{"LineAndParagraphSeparators", "Fix\u2028the\u2029build", "Fix the build"},
		{"C0Controls", "Fix\x00 the\x07 build\x1b[31m", "Fix the build[31m"},
		{"DEL", "Fix\x7f the build", "Fix the build"},
		{"C1Controls", "Fix\u0085 the\u009b build", "Fix the build"},
		{"ZeroWidthSpace", "hello\u200bworld", "helloworld"},
		{"ZeroWidthNonJoinerAndJoiner", "hello\u200c\u200dworld", "helloworld"},
		{"WordJoiner", "hello\u2060world", "helloworld"},
		{"ByteOrderMark", "\ufeffhelloworld", "helloworld"},
		{"BidiEmbeddingsAndOverrides", "\u202aabc\u202b\u202c\u202d\u202edef", "abcdef"},
		{"BidiIsolates", "\u2066abc\u2067\u2068\u2069def", "abcdef"},
		{"BidiMarks", "abc\u200e\u200f\u061cdef", "abcdef"},
		{"SoftHyphen", "hel\u00adlo", "hello"},
		{"OnlyInvisible", "\u200b \u202e\t\ufeff", ""},
		{"Empty", "", ""},
		{"CJKKept", " 修复构建 ", "修复构建"},
		{"EmojiKept", "Trip 🏔️ plans", "Trip 🏔️ plans"},
		{"LongAfterStripping", strings.Repeat("t\u200b", 100), strings.Repeat("t", 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rules.SanitizeTitle(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("rules.SanitizeTitle(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			if again, _ := rules.SanitizeTitle(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestSanitizeTitle_Refusals(t *testing.T) {
	for name, in := range map[string]string{
		"InvalidUTF8":  "bad \xff title",
		"TooLong":      strings.Repeat("t", 101),
		"TooLongAfter": strings.Repeat("t ", 51),
	} {
		if got, err := rules.SanitizeTitle(in); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: sanitizeTitle = %q, %v; want ErrInvalidInput", name, got, err)
		}
	}
}

func TestTitleBase(t *testing.T) {
	tests := []struct {
		in   string
		base string
		n    int
	}{
		{"Fix the build", "Fix the build", 1},
		{"Fix the build #2", "Fix the build", 2},
		{"Fix the build #12", "Fix the build", 12},
		{"Fix the build#2", "Fix the build#2", 1},
		{"#2", "#2", 1},
		{"Issue #2 #3", "Issue #2", 3},
		{"Fix the build #", "Fix the build #", 1},
	}
	for _, tt := range tests {
		if base, n := titleBase(tt.in); base != tt.base || n != tt.n {
			t.Errorf("titleBase(%q) = %q, %d; want %q, %d", tt.in, base, n, tt.base, tt.n)
		}
	}
	if got := numberedTitle(strings.Repeat("a", 100), 10); len(got) != 100 || !strings.HasSuffix(got, " #10") {
		t.Errorf("numberedTitle of a full-length base = %q (%d), want 100 characters ending in #10", got, len(got))
	}
}
