package rules

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/store/driver"
)

// SanitizeTitle is the one form a title is stored and compared in. A
// title is a name people pick a conversation by in a list, so two titles
// that look the same must be the same: anything invisible or
// layout-changing is removed before storing and before comparing.
//
//   - Whitespace of any kind (tabs, newlines, no-break and ideographic
//     spaces, line and paragraph separators) becomes one ASCII space, runs
//     collapse, and the ends are trimmed: a title is one line.
//   - Control characters (C0, DEL, C1) are removed.
//   - Format characters (Unicode category Cf) are removed: the zero-width
//     space, joiners and no-break (U+200B–U+200D, U+2060, U+FEFF), the
//     bidirectional embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069) and marks (U+200E, U+200F, U+061C), the soft hyphen
//     and the invisible operators. A joiner inside an emoji sequence goes
//     too: the emoji then shows as its parts, which is a fair price for
//     titles that cannot hide text.
//
// A title empty after this is no title. Invalid UTF-8 is refused, not
// repaired: the caller's bytes are wrong, and guessing would store
// something they did not write.
func SanitizeTitle(title string) (string, error) {
	if !utf8.ValidString(title) {
		return "", driver.Invalid("title is not valid UTF-8")
	}
	out := FoldLine(title)
	if utf8.RuneCountInString(out) > MaxTitleLen {
		return "", driver.Invalid("title longer than %d characters", MaxTitleLen)
	}
	return out, nil
}

// FoldLine makes text one clean line, as a title or a preview shows it:
// whitespace runs become one space, control and format characters go, the
// ends are trimmed (the rules of sanitizeTitle).
func FoldLine(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	space := false // a space is owed before the next visible rune
	for _, r := range text {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			// removed, and does not separate words: "hel\u200blo" is "hello"
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
