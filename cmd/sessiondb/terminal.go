package main

// terminal.go keeps stored text from driving the terminal: every text
// printer of the CLI passes what it did not write itself through oneLine
// (table cells) or transcript (message bodies).

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// oneLine folds stored text onto one table row that cannot drive the
// terminal: escape sequences (ESC or a C1 introducer, with their
// parameters and strings) are dropped whole; every other control
// character (line breaks, tabs, NUL, DEL, C1), invalid byte and run of
// whitespace becomes one space; the ends are trimmed.
func oneLine(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b || r == 0x9b || r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f:
			i = skipEscape(s, i)
			space = true
			continue
		case unicode.IsControl(r) || unicode.IsSpace(r) || (r == utf8.RuneError && size == 1):
			space = true
		default:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// skipEscape returns the index after the escape sequence at s[i] (ECMA-48):
// a control sequence (ESC [ or CSI: parameter and intermediate bytes, then
// a final byte), a control string (ESC ] P X ^ _, or OSC DCS SOS PM APC:
// up to ST or BEL), or ESC with intermediate bytes and a final byte. A
// sequence cut short runs to the end of s.
func skipEscape(s string, i int) int {
	r, size := utf8.DecodeRuneInString(s[i:])
	i += size
	kind := r
	if r == 0x1b {
		if i == len(s) {
			return i
		}
		switch c := s[i]; c {
		case '[':
			kind = 0x9b
		case ']', 'P', 'X', '^', '_':
			kind = 0x9d
		default: // ESC, intermediates, final
			for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
				i++
			}
			if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
				i++
			}
			return i
		}
		i++
	}
	if kind == 0x9b { // parameters, intermediates, final
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			i++
		}
		return i
	}
	for i < len(s) { // a control string, to ST (ESC \ or U+009C) or BEL
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
		i++
	}
	return i
}

// inert makes one line of stored text safe to print and keeps its shape:
// escape sequences are dropped whole, a tab becomes four spaces, every
// other control character (and any line break) is dropped, an invalid
// byte becomes U+FFFD; spaces, and so code indentation, stay as stored.
func inert(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b || r == 0x9b || r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f:
			i = skipEscape(s, i)
			continue
		case r == '\t':
			b.WriteString("    ")
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// transcript indents a message body for printMessages, each line made
// inert (line breaks and indentation are kept, every other control goes).
func transcript(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("    "+inert(l), " ")
	}
	return strings.Join(lines, "\n")
}
