package db

import (
	"strings"
	"unicode"
)

// Snippet shape (Hermes's numbers): about 120 characters, starting 40
// before the first match, matches between >>> and <<<.
const (
	snippetLen  = 120
	snippetLead = 40
	markOpen    = ">>>"
	markClose   = "<<<"
	// highlight() marks the word index's matches with these control
	// characters, which Go turns into the public markers: text holds them
	// far more rarely than ">>>".
	hlOpen, hlClose = '\x02', '\x03'
)

// highlightSnippet builds a snippet from the word index's highlighted
// text (highlight() with hlOpen and hlClose). ok is false when nothing in
// it is marked (the match was in the other column).
func highlightSnippet(h string) (snip string, ok bool) {
	runes := make([]rune, 0, len(h))
	var marks []bool
	in := false
	for _, r := range h {
		switch r {
		case hlOpen:
			in, ok = true, true
			continue
		case hlClose:
			in = false
			continue
		}
		runes = append(runes, r)
		marks = append(marks, in)
	}
	first := 0
	for first < len(marks) && !marks[first] {
		first++
	}
	if first == len(marks) {
		first = 0
	}
	return cutSnippet(runes, marks, first), ok
}

// substringSnippet builds a snippet from plain text around the first
// case-folded occurrence of any term (the trigram index's and the scan's
// matching), marking every occurrence in the snippet. ok is false when no
// term occurs in text.
func substringSnippet(text string, terms searchTerms) (snip string, ok bool) {
	runes := []rune(text)
	pats := make([][]rune, len(terms))
	for i, t := range terms {
		pats[i] = []rune(t)
	}
	return snippetOf(runes, func(i int) int {
		n := 0
		for _, p := range pats {
			if len(p) > n && foldPrefix(runes[i:], p) {
				n = len(p)
			}
		}
		return n
	})
}

// wordSnippet builds a snippet the way the word index matches: each term
// is a phrase of words (runs of letters and digits), matched whole and
// case-folded. It does not fold diacritics as the index does (café for
// cafe): ok is false when no term is found, and the caller asks the index.
func wordSnippet(text string, terms searchTerms) (snip string, ok bool) {
	runes := []rune(text)
	toks := wordSpans(runes)
	tokAt := make([]int, len(runes)) // token index + 1 at each token start
	for k, t := range toks {
		tokAt[t[0]] = k + 1
	}
	phrases := make([][][]rune, len(terms))
	for i, term := range terms {
		tr := []rune(term)
		for _, t := range wordSpans(tr) {
			phrases[i] = append(phrases[i], tr[t[0]:t[1]])
		}
	}
	return snippetOf(runes, func(i int) int {
		k := tokAt[i] - 1
		if k < 0 {
			return 0
		}
		n := 0
	phrase:
		for _, ph := range phrases {
			if len(ph) == 0 || k+len(ph) > len(toks) {
				continue
			}
			for j, w := range ph {
				t := toks[k+j]
				if t[1]-t[0] != len(w) || !foldPrefix(runes[t[0]:t[1]], w) {
					continue phrase
				}
			}
			n = max(n, toks[k+len(ph)-1][1]-i)
		}
		return n
	})
}

// wordSpans returns the [start, end) rune ranges of the words in runes,
// as the unicode61 tokenizer splits them.
func wordSpans(runes []rune) [][2]int {
	var spans [][2]int
	start := -1
	for i, r := range runes {
		switch in := isIndexRune(r); {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			spans = append(spans, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, len(runes)})
	}
	return spans
}

// snippetOf marks the matches (match(i): the length in runes of a match
// starting at rune i, or 0) from the first one to the end of the snippet
// window, and cuts the snippet around the first. The scan stops at the
// window's end, so a long text costs only up to its first match.
func snippetOf(runes []rune, match func(i int) int) (snip string, ok bool) {
	marks := make([]bool, len(runes))
	first, end := -1, len(runes)
	for i := 0; i < end; i++ {
		n := match(i)
		if n == 0 {
			continue
		}
		if first < 0 {
			first = i
			end = min(len(runes), max(0, i-snippetLead)+snippetLen)
		}
		for k := i; k < min(end, i+n); k++ {
			marks[k] = true
		}
	}
	if first < 0 {
		return cutSnippet(runes, marks, 0), false
	}
	return cutSnippet(runes, marks, first), true
}

// cutSnippet renders about snippetLen characters starting snippetLead
// before first: marked runs between the markers, whitespace and control
// characters collapsed to one space, "..." where the text was cut.
func cutSnippet(runes []rune, marks []bool, first int) string {
	start := max(0, first-snippetLead)
	end := min(len(runes), start+snippetLen)
	var b strings.Builder
	if start > 0 {
		b.WriteString("...")
	}
	space := start == 0 // no leading space
	for i := start; i < end; i++ {
		r := runes[i]
		open := marks[i] && (i == start || !marks[i-1])
		closing := marks[i] && (i == end-1 || !marks[i+1])
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			if space && !open && !closing {
				continue
			}
			r, space = ' ', true
		} else {
			space = false
		}
		if open {
			b.WriteString(markOpen)
		}
		b.WriteRune(r)
		if closing {
			b.WriteString(markClose)
		}
	}
	out := strings.TrimRight(b.String(), " ")
	if end < len(runes) {
		out += "..."
	}
	return out
}

// foldPrefix reports whether s starts with p under Unicode simple case
// folding (what the trigram index does; the scan folds ASCII only).
func foldPrefix(s, p []rune) bool {
	if len(p) == 0 || len(s) < len(p) {
		return false
	}
	for i, r := range p {
		if !foldEqual(s[i], r) {
			return false
		}
	}
	return true
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
