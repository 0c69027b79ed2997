package rules

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/store/driver"
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
			got, err := SanitizeTitle(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("SanitizeTitle(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			if again, _ := SanitizeTitle(got); again != got {
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
		if got, err := SanitizeTitle(in); !errors.Is(err, driver.ErrInvalidInput) {
			t.Errorf("%s: sanitizeTitle = %q, %v; want driver.ErrInvalidInput", name, got, err)
		}
	}
}
