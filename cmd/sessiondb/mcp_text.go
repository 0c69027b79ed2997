package main

// mcp_text.go keeps what the MCP server returns inert and bounded: stored
// text may hold anything, and an agent's client may show it on a terminal.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// inertText returns stored text with its line structure (newlines, tabs,
// indentation) kept and nothing that could drive a terminal: escape
// sequences (ESC or a C1 introducer, with their parameters and strings)
// are dropped whole, as oneLine drops them; every other C0/C1 control,
// DEL and invalid byte becomes a space; CRLF becomes LF.
func inertText(s string) string {
	clean := true
	for _, r := range s {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == utf8.RuneError) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b || r == 0x9b || r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f:
			i = skipEscape(s, i)
			continue
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r) || (r == utf8.RuneError && size == 1):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// clip cuts s to at most max bytes at a rune boundary and reports whether
// it cut anything.
func clip(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
