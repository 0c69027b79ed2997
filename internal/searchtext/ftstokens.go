package searchtext

// ftstokens.go is a Go copy of the two full-text tokenizers' rules, so
// that Search can match the rows still waiting for indexing (past the
// index's mark, or queued in fts_pending) exactly as the indexes will once
// they hold them (search_tail.go).
//
// Both tokenizers work one character at a time: unicode61 (the word
// index; remove_diacritics 1, the categories L* N* Co) splits at separator
// characters and folds each token character to one character or none (a
// combining diacritic); trigram (case_sensitive 0) folds each character's
// case and keeps every character. So a per-character table is the whole
// of their behaviour. The tables (ftstokens_tables.go) are generated from
// the driver's own tokenizers and checked against them
// (TestFTSTokenTables_MatchTheDriver): Go's unicode package follows a
// newer Unicode than SQLite's tables, so it is not used.

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// What a tokenizer makes of a character, besides folding it to another.
const (
	FTSSeparator rune = -1 // ends a token
	FTSDropped   rune = 0  // a token character that folds to nothing
)

type runeRange struct{ lo, hi rune }

// tokenBMP is every Basic Multilingual Plane character's word and trigram
// rule, built once from the tables: one array read per character on the
// path that matches every queued row on every search.
var tokenBMP = sync.OnceValue(func() *[2][0x10000]rune {
	var t [2][0x10000]rune
	for c := range rune(0x10000) {
		t[0][c], t[1][c] = c, c
	}
	for _, r := range wordSeparatorRanges {
		for c := r.lo; c <= min(r.hi, 0xFFFF); c++ {
			t[0][c] = FTSSeparator
		}
	}
	for _, r := range wordDroppedRanges {
		for c := r.lo; c <= min(r.hi, 0xFFFF); c++ {
			t[0][c] = FTSDropped
		}
	}
	for _, f := range wordFolds {
		if f[0] <= 0xFFFF {
			t[0][f[0]] = f[1]
		}
	}
	for _, f := range trigramFolds {
		if f[0] <= 0xFFFF {
			t[1][f[0]] = f[1]
		}
	}
	t[0][0] = FTSSeparator
	return &t
})

// WordRune is what the word tokenizer makes of c: FTSSeparator,
// FTSDropped, or the character it indexes.
func WordRune(c rune) rune {
	if c <= 0xFFFF {
		return tokenBMP()[0][c]
	}
	switch {
	case inRanges(wordSeparatorRanges, c):
		return FTSSeparator
	case inRanges(wordDroppedRanges, c):
		return FTSDropped
	}
	return foldOf(wordFolds, c)
}

// TrigramRune is the character the trigram tokenizer indexes for c.
func TrigramRune(c rune) rune { return trigramRuneIn(&tokenBMP()[1], c) }

// trigramRuneIn is TrigramRune with the BMP's folding table in hand.
func trigramRuneIn(bmp *[0x10000]rune, c rune) rune {
	if c <= 0xFFFF {
		return bmp[c]
	}
	return foldOf(trigramFolds, c)
}

func inRanges(rs []runeRange, c rune) bool {
	_, found := slices.BinarySearchFunc(rs, c, func(r runeRange, c rune) int {
		switch {
		case r.hi < c:
			return -1
		case r.lo > c:
			return 1
		}
		return 0
	})
	return found
}

func foldOf(folds [][2]rune, c rune) rune {
	if i, ok := slices.BinarySearchFunc(folds, c, func(f [2]rune, c rune) int { return int(f[0] - c) }); ok {
		return folds[i][1]
	}
	return c
}

// WordTokens writes s as the word tokenizer indexes it: its folded
// tokens, each between single spaces (" tok1 tok2 "), so that a phrase —
// its own tokens written the same way — matches where it is a substring:
// tokens never hold a space. (WordTokenList splits the same way, with
// offsets, for highlighting; this form allocates nothing per token, as it
// runs over every queued row on every search.) A token whose characters all fold to nothing still
// takes a position, as in the index (an empty token between two spaces).
func WordTokens(b *strings.Builder, s string) {
	b.WriteByte(' ')
	in := false
	for _, c := range s {
		f := WordRune(c)
		if f == FTSSeparator {
			if in {
				b.WriteByte(' ')
				in = false
			}
			continue
		}
		in = true
		if f != FTSDropped {
			b.WriteRune(f)
		}
	}
	if in {
		b.WriteByte(' ')
	}
}

// TrigramText writes s folded as the trigram tokenizer folds it: a term of
// three or more characters matches where its folding is a substring. The
// tokenizer skips NUL (the characters around it form trigrams together),
// so the folding leaves it out.
func TrigramText(b *strings.Builder, s string) {
	b.Write(AppendTrigramFolded(nil, []byte(s)))
}

// AppendTrigramFolded appends s folded as TrigramText folds it to buf:
// the one place the trigram folding rule is written.
// It runs over every candidate's text of a substring search (twice for
// those it ranks), so it reads the folding table once a call and copies
// an ASCII character whose folding is ASCII as a byte, without decoding
// and encoding it: the same runes as TrigramRune one by one
// (TestAppendTrigramFolded_SameAsRuneByRune).
func AppendTrigramFolded(buf, s []byte) []byte {
	bmp := &tokenBMP()[1]
	for len(s) > 0 {
		if b := s[0]; b < utf8.RuneSelf {
			s = s[1:]
			switch f := bmp[b]; {
			case b == 0: // the tokenizer skips NUL
			case f < utf8.RuneSelf:
				buf = append(buf, byte(f))
			default:
				buf = utf8.AppendRune(buf, f)
			}
			continue
		}
		c, size := utf8.DecodeRune(s) // never NUL: s[0] is not ASCII
		s = s[size:]
		buf = utf8.AppendRune(buf, trigramRuneIn(bmp, c))
	}
	return buf
}

// SQLLower is SQLite's lower() without ICU: ASCII letters only (the
// short-term test of the trigram route, instr(lower(...), lower(...))).
func SQLLower(s string) string { return strings.Map(asciiLower, s) }

// wordToken is one token of a text as the word tokenizer sees it: its
// bytes in the text and its folded form.
type wordToken struct {
	start, end int
	folded     string
}

// WordTokenList splits s as the word tokenizer does.
func WordTokenList(s string) []wordToken {
	var toks []wordToken
	var b strings.Builder
	start := -1
	for i, c := range s {
		f := WordRune(c)
		if f == FTSSeparator {
			if start >= 0 {
				toks = append(toks, wordToken{start, i, b.String()})
				b.Reset()
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
		if f != FTSDropped {
			b.WriteRune(f)
		}
	}
	if start >= 0 {
		toks = append(toks, wordToken{start, len(s), b.String()})
	}
	return toks
}

// WordHighlight marks every match of the terms' phrases in text between
// hlOpen and hlClose, by the word index's rules (unicode61: case and
// diacritics folded), as FTS5's highlight() would; ok is false when
// nothing matched. The word index is contentless, so it has no text to
// mark: snippets that WordSnippet's quicker scan misses come from here.
func WordHighlight(text string, terms Terms) (marked string, ok bool) {
	toks := WordTokenList(text)
	in := make([]bool, len(toks)) // tokens inside a match
	for _, term := range terms {
		ph := WordTokenList(term)
		if len(ph) == 0 {
			continue
		}
	next:
		for i := 0; i+len(ph) <= len(toks); i++ {
			for k := range ph {
				if toks[i+k].folded != ph[k].folded {
					continue next
				}
			}
			for k := range ph {
				in[i+k] = true
			}
			ok = true
		}
	}
	if !ok {
		return "", false
	}
	var b strings.Builder
	last := 0
	for i, t := range toks {
		if !in[i] || (i > 0 && in[i-1]) {
			continue
		}
		end := i
		for end+1 < len(toks) && in[end+1] {
			end++
		}
		b.WriteString(text[last:t.start])
		b.WriteByte(hlOpen)
		b.WriteString(text[t.start:toks[end].end])
		b.WriteByte(hlClose)
		last = toks[end].end
	}
	b.WriteString(text[last:])
	return b.String(), true
}
