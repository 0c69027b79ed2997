package searchtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippet shape (Hermes's numbers): about 120 characters, starting 40
// before the first match, matches between >>> and <<<.
const (
	SnippetLen  = 120
	snippetLead = 40
	MarkOpen    = ">>>"
	MarkClose   = "<<<"
	// WordHighlight marks the word rules' matches with these bytes, which
	// HighlightSnippet turns into the public markers. They never occur in
	// UTF-8, and every write path refuses text that is not UTF-8, so
	// stored text cannot fake a mark.
	hlOpen, hlClose = 0xff, 0xfe
)

// Snippets cost what they show, not what the message holds: the first
// match is found on the stored string, in place, and only the window
// around it (SnippetLen characters) is decoded. A message of megabytes
// costs a walk up to its first match and no copy.

// matcher returns the length in bytes of a match starting at byte i of
// text (a character boundary), or 0.
type matcher func(text string, i int) int

// SubstringSnippet builds a snippet from plain text around the first
// case-folded occurrence of any term (the trigram index's and the scan's
// matching), marking every occurrence in the snippet. ok is false when no
// term occurs in text.
func SubstringSnippet(text string, terms Terms) (snip string, ok bool) {
	return snippetOf(text, func(text string, i int) int {
		n := 0
		for _, t := range terms {
			n = max(n, foldPrefix(text[i:], t))
		}
		return n
	})
}

// WordSnippet builds a snippet the way the word index matches: each term
// is a phrase of words (runs of letters and digits), matched whole and
// case-folded. It does not fold diacritics as the index does (café for
// cafe): ok is false when no term is found, and the caller asks the index.
func WordSnippet(text string, terms Terms) (snip string, ok bool) {
	phrases := make([][]string, len(terms))
	for i, term := range terms {
		phrases[i] = strings.FieldsFunc(term, notIndexRune)
	}
	return snippetOf(text, func(text string, i int) int {
		if !wordStart(text, i) {
			return 0
		}
		n := 0
		for _, ph := range phrases {
			n = max(n, phraseAt(text, i, ph))
		}
		return n
	})
}

func notIndexRune(r rune) bool { return !IsIndexRune(r) }

// wordStart reports whether a word (as the unicode61 tokenizer splits
// them) starts at byte i of text.
func wordStart(text string, i int) bool {
	r, _ := utf8.DecodeRuneInString(text[i:])
	if !IsIndexRune(r) {
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(text[:i])
	return i == 0 || !IsIndexRune(prev)
}

// phraseAt returns the length in bytes of the phrase (its words, side by
// side with anything but words between them) starting at the word at byte
// i of text, or 0. Each word must match a whole word of text.
func phraseAt(text string, i int, phrase []string) int {
	if len(phrase) == 0 {
		return 0
	}
	pos := i
	for k, w := range phrase {
		if k > 0 { // skip to the next word
			for pos < len(text) {
				r, size := utf8.DecodeRuneInString(text[pos:])
				if IsIndexRune(r) {
					break
				}
				pos += size
			}
		}
		n := foldPrefix(text[pos:], w)
		if n == 0 {
			return 0
		}
		pos += n
		if r, _ := utf8.DecodeRuneInString(text[pos:]); pos < len(text) && IsIndexRune(r) {
			return 0 // the word of text goes on: not a whole-word match
		}
	}
	return pos - i
}

// snippetOf finds the first match in text and cuts the snippet around it,
// marking every match that starts in the snippet's window (to the window's
// end). Without a match, the snippet is the start of text and ok is false.
func snippetOf(text string, match matcher) (snip string, ok bool) {
	first := -1
	for i := 0; i < len(text); {
		if match(text, i) > 0 {
			first = i
			break
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	if first < 0 {
		runes, _, end := decodeWindow(text, 0)
		return renderSnippet(runes, make([]bool, len(runes)), false, end < len(text)), false
	}
	start := first
	for k := 0; k < snippetLead && start > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	runes, offs, end := decodeWindow(text, start)
	marks := make([]bool, len(runes))
	for k, at := range offs {
		if at < first {
			continue
		}
		if n := match(text, at); n > 0 {
			for j := k; j < len(runes) && offs[j] < at+n; j++ {
				marks[j] = true
			}
		}
	}
	return renderSnippet(runes, marks, start > 0, end < len(text)), true
}

// decodeWindow decodes up to SnippetLen characters of text from byte
// start: the characters (invalid bytes as U+FFFD), the byte offset of
// each, and the byte offset after the last.
func decodeWindow(text string, start int) (runes []rune, offs []int, end int) {
	runes, offs = make([]rune, 0, SnippetLen), make([]int, 0, SnippetLen)
	end = start
	for len(runes) < SnippetLen && end < len(text) {
		r, size := utf8.DecodeRuneInString(text[end:])
		runes, offs = append(runes, r), append(offs, end)
		end += size
	}
	return runes, offs, end
}

// HighlightSnippet builds a snippet from highlighted text (WordHighlight:
// hlOpen and hlClose around each match). ok is false when nothing in it
// is marked (the match was in another column).
func HighlightSnippet(h string) (snip string, ok bool) {
	first := strings.IndexByte(h, hlOpen)
	start := max(first, 0)
	for k := 0; k < snippetLead && start > 0; k++ { // no marks before the first
		_, size := utf8.DecodeLastRuneInString(h[:start])
		start -= size
	}
	runes, marks := make([]rune, 0, SnippetLen), make([]bool, 0, SnippetLen)
	in, end := false, start
	for end < len(h) {
		switch h[end] {
		case hlOpen:
			in = true
			end++
			continue
		case hlClose:
			in = false
			end++
			continue
		}
		if len(runes) == SnippetLen {
			break
		}
		r, size := utf8.DecodeRuneInString(h[end:])
		runes, marks = append(runes, r), append(marks, in)
		end += size
	}
	return renderSnippet(runes, marks, start > 0, end < len(h)), first >= 0
}

// renderSnippet writes a snippet's characters: marked runs between hlOpen
// and hlClose (PublishSnippet turns them into the public markers and
// SearchHit.Marks), whitespace and control characters collapsed to one
// space, "..." where the text was cut before or after.
func renderSnippet(runes []rune, marks []bool, cutBefore, cutAfter bool) string {
	var b strings.Builder
	if cutBefore {
		b.WriteString("...")
	}
	space := !cutBefore // no leading space
	for i, r := range runes {
		open := marks[i] && (i == 0 || !marks[i-1])
		closing := marks[i] && (i == len(runes)-1 || !marks[i+1])
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			if space && !open && !closing {
				continue
			}
			r, space = ' ', true
		} else {
			space = false
		}
		if open {
			b.WriteByte(hlOpen)
		}
		b.WriteRune(r)
		if closing {
			b.WriteByte(hlClose)
		}
	}
	out := strings.TrimRight(b.String(), " ")
	if cutAfter {
		out += "..."
	}
	return out
}

// PublishSnippet turns a rendered snippet's hlOpen and hlClose into the
// public markers and records where each marked run lies. The bytes cannot
// come from stored text (it is UTF-8, and decodeWindow turns any stray
// byte into U+FFFD), so Marks are exactly the matches, whatever ">>>" or
// "<<<" the text itself holds.
func PublishSnippet(s string) (snip string, marks []Mark) {
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case hlOpen:
			b.WriteString(MarkOpen)
			start = b.Len()
		case hlClose:
			marks = append(marks, Mark{Start: start, End: b.Len()})
			b.WriteString(MarkClose)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), marks
}

// foldPrefix returns the length in bytes of the prefix of s that equals p
// under Unicode simple case folding (what the trigram index does; the scan
// folds ASCII only), or 0.
func foldPrefix(s, p string) int {
	if p == "" {
		return 0
	}
	n := 0
	for _, pr := range p {
		if n == len(s) {
			return 0
		}
		r, size := utf8.DecodeRuneInString(s[n:])
		if !foldEqual(r, pr) {
			return 0
		}
		n += size
	}
	return n
}

func foldEqual(a, b rune) bool {
	if a == b {
		return true
	}
	if a < 0x80 && b < 0x80 {
		return asciiLower(a) == asciiLower(b)
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

func asciiLower(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// Mark is a matched run of a snippet: Snippet[Start:End].
type Mark struct{ Start, End int }
