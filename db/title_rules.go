package db

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sanitizeTitle is the one form a title is stored and compared in. A
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
func sanitizeTitle(title string) (string, error) {
	if !utf8.ValidString(title) {
		return "", invalid("title is not valid UTF-8")
	}
	out := foldLine(title)
	if utf8.RuneCountInString(out) > maxTitleLen {
		return "", invalid("title longer than %d characters", maxTitleLen)
	}
	return out, nil
}

// foldLine makes text one clean line, as a title or a preview shows it:
// whitespace runs become one space, control and format characters go, the
// ends are trimmed (the rules of sanitizeTitle).
func foldLine(text string) string {
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

// lineageNumber matches the " #N" a continuation's title carries.
var lineageNumber = regexp.MustCompile(` #([0-9]{1,9})$`)

// titleBase splits a title into the conversation's name and the number of
// the continuation it names: "Fix the build #3" is ("Fix the build", 3);
// a title without a number is number 1.
func titleBase(title string) (base string, n int) {
	m := lineageNumber.FindStringSubmatchIndex(title)
	if m == nil || m[0] == 0 {
		return title, 1
	}
	n, _ = strconv.Atoi(title[m[2]:m[3]])
	return title[:m[0]], n
}

// numberedTitle is the title of a lineage's n-th session: the base alone
// for the first, "base #n" after. The number always fits: the base is cut
// so the whole stays within maxTitleLen.
func numberedTitle(base string, n int) string {
	if n <= 1 {
		return base
	}
	suffix := " #" + strconv.Itoa(n)
	if room := maxTitleLen - utf8.RuneCountInString(suffix); utf8.RuneCountInString(base) > room {
		base = strings.TrimRight(string([]rune(base)[:room]), " ")
	}
	return base + suffix
}
