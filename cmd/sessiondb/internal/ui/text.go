package ui

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// visible makes hostile text harmless to look at: C0 and C1 control
// characters (an ANSI escape's ESC among them) become their visible
// symbols (␛, ␀ …) or ⟨U+XXXX⟩, and so do the bidirectional controls that
// could reorder what a reader sees (the "Trojan Source" trick). Newlines
// and tabs stay. html/template escapes the result; this only makes sure
// nothing invisible acts on the page.
func visible(s string) string {
	if !needsVisible(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "⟨%#02x⟩", s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r) // the Control Pictures block: ␀ … ␟
		case r == 0x7f:
			b.WriteRune('␡')
		case r >= 0x80 && r < 0xa0, isBidiControl(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

func needsVisible(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || isBidiControl(r) || r == utf8.RuneError {
			return true
		}
	}
	return false
}

// isBidiControl: the marks, embeddings, overrides and isolates of the
// Unicode bidirectional algorithm.
func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// segment is a run of a text: prose, or a fenced code block.
type segment struct {
	Code bool
	Lang string
	Text string
}

// segments cuts text at its ``` fences: a line starting with ``` opens a
// code block (the rest of the line names its language) and the next such
// line closes it; an unclosed block runs to the end.
func segments(text string) []segment {
	var out []segment
	var cur strings.Builder
	code, lang := false, ""
	flush := func() {
		t := cur.String()
		cur.Reset()
		if code {
			t = strings.TrimSuffix(t, "\n")
		} else {
			t = strings.Trim(t, "\n")
		}
		if t != "" || code {
			out = append(out, segment{Code: code, Lang: lang, Text: visible(t)})
		}
	}
	for line := range strings.Lines(text) {
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "```") {
			flush()
			if code {
				code, lang = false, ""
			} else {
				code, lang = true, visible(strings.TrimSpace(strings.TrimPrefix(trimmed, "```")))
			}
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return out
}

// sessionURL is a session's conversation page.
func sessionURL(id string) string { return "/s/" + url.PathEscape(id) }

// messageURL opens a message in its conversation, scrolled to it.
func messageURL(sessionID string, id int64) string {
	return sessionURL(sessionID) + "?at=" + strconv.FormatInt(id, 10) + "#m" + strconv.FormatInt(id, 10)
}
