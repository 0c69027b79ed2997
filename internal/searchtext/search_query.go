package searchtext

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query limits. The byte cap is Hermes's; the term cap bounds the work a
// query can ask of the scan fallback (every term is a substring test on
// every message).
const (
	MaxQueryBytes = 2048
	MaxQueryTerms = 64
	// TrigramLen is the shortest term the trigram index can match: a
	// shorter one yields no trigram and would match nothing.
	TrigramLen = 3
)

// Terms is a user's query made safe: literal texts, never FTS5
// syntax. The word index matches each as a phrase (so foo.bar finds the
// words foo and bar side by side), the trigram index and the scan as a
// case-folded substring; a message must match every term.
type Terms []string

// Sanitize turns anything a user can type into terms that FTS5
// cannot misread. It never fails: an empty result means "no query".
//
//   - The input is cut to 2048 bytes, on a character boundary; invalid
//     UTF-8 and control characters (NUL included) separate terms.
//   - A balanced "double-quoted phrase" is one term; a quote without a
//     partner is dropped.
//   - Elsewhere, whitespace and FTS5's syntax characters
//     ( ) [ ] { } * ^ + : , ; ! ? < > | = ~ ` separate terms, so prefix
//     and initial-token marks (foo*, ^foo) are plain words, and
//     punctuation around a term is trimmed ('single', -foo, end.).
//     Punctuation inside a term stays: foo.bar, gpt-4o and v1.2.3 are
//     single terms.
//   - A column filter (content:foo, tool_name:foo) loses its column name:
//     the text is searched everywhere.
//   - AND, OR, NOT and NEAR are words like any other: every term is quoted
//     when it reaches FTS5, and terms are joined by an implicit AND.
//   - A term without a letter, digit or symbol (only punctuation) is
//     dropped; at most 64 terms are kept.
func Sanitize(raw string) Terms {
	if len(raw) > MaxQueryBytes {
		cut := MaxQueryBytes
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut]
	}
	raw = strings.ToValidUTF8(raw, " ")
	var terms Terms
	add := func(t string) {
		if t != "" && len(terms) < MaxQueryTerms {
			terms = append(terms, t)
		}
	}
	var cur strings.Builder
	flush := func() {
		add(strings.TrimFunc(cur.String(), notWordRune))
		cur.Reset()
	}
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRuneInString(raw[i:])
		switch {
		case r == '"':
			flush()
			end := strings.IndexByte(raw[i+1:], '"')
			if end < 0 { // unbalanced: drop the quote
				i += size
				continue
			}
			add(cleanPhrase(raw[i+1 : i+1+end]))
			i += end + 2
			continue
		case r == ':' && isColumnName(strings.TrimFunc(cur.String(), notWordRune)):
			cur.Reset() // a column filter: search its text everywhere
		case isBreakRune(r):
			flush()
		default:
			cur.WriteRune(r)
		}
		i += size
	}
	flush()
	return terms
}

// cleanPhrase normalises the inside of a quoted phrase: control characters
// become spaces, runs of spaces collapse. A phrase without a word
// character is dropped ("").
func cleanPhrase(p string) string {
	p = strings.Join(strings.FieldsFunc(p, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if strings.IndexFunc(p, isWordRune) < 0 {
		return ""
	}
	return p
}

// isColumnName reports the word index's column names, which a user may
// write as a column filter (content:foo).
func isColumnName(s string) bool {
	return strings.EqualFold(s, "content") || strings.EqualFold(s, "tool_name")
}

// isBreakRune reports the characters that end a term outside a phrase:
// whitespace, control characters and FTS5's operator characters.
func isBreakRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("()[]{}*^+:,;!?<>|=~`", r)
}

// isWordRune reports the characters that make a term worth searching:
// letters, digits, private-use characters and (non-ASCII) symbols such as
// emoji.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) ||
		(r >= utf8.RuneSelf && unicode.IsSymbol(r))
}

func notWordRune(r rune) bool { return !isWordRune(r) }

// IsIndexRune reports the characters FTS5's unicode61 tokenizer indexes
// (categories L*, N* and Co); a term without one is an empty phrase there.
func IsIndexRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// IsUnsegmented reports scripts written without spaces between words,
// which the word index keeps as one long token: only substring search
// (the trigram index) finds a word inside them.
func IsUnsegmented(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar, unicode.Bopomofo, unicode.Yi)
}

// wordMatch is the FTS5 expression for the word index: every term a
// quoted string, joined by implicit AND. It returns "" when a term has
// nothing the word index can match (only emoji or symbols, or a script it
// does not segment), so the caller goes straight to substring search.
func (t Terms) WordMatch() string {
	for _, term := range t {
		if strings.IndexFunc(term, IsIndexRune) < 0 || strings.IndexFunc(term, IsUnsegmented) >= 0 {
			return ""
		}
	}
	return QuoteTerms(t)
}

// TrigramMatch splits the terms for the trigram index, which keeps no
// positions (detail=none: a third of the size, migration 13), so it can
// only say which messages hold every trigram of a term, not whether they
// stand side by side. It returns the FTS5 expression that finds those
// candidates ("" when no term has three characters: the index cannot
// serve the query), the long terms folded as the tokenizer folds them,
// as a JSON array, for the exact test of a candidate and its score
// (TrigramTerms, which db registers as sessiondb_trigram_match and
// sessiondb_trigram_score), and the shorter terms as a JSON array, which
// the query checks with instr.
//
// A term's trigrams are taken every three characters, and the last one:
// together they cover every character of it, and any message that holds
// the term holds them all. The exact test removes the rest.
func (t Terms) TrigramMatch() (match, long, short string) {
	var tris, folded, rest []string
	seen := map[string]bool{}
	for _, term := range t {
		runes := []rune(term)
		if len(runes) < TrigramLen {
			rest = append(rest, term)
			continue
		}
		var b strings.Builder
		TrigramText(&b, term)
		folded = append(folded, b.String())
		for i := 0; ; i += TrigramLen {
			i = min(i, len(runes)-TrigramLen)
			if tri := string(runes[i : i+TrigramLen]); !seen[tri] {
				seen[tri] = true
				tris = append(tris, tri)
			}
			if i == len(runes)-TrigramLen {
				break
			}
		}
	}
	if len(folded) == 0 {
		return "", JSONStrings(nil), JSONStrings(rest)
	}
	return QuoteTerms(tris), JSONStrings(folded), JSONStrings(rest)
}

// QuoteTerms makes each term an FTS5 string. Terms never hold a double
// quote (it delimits phrases), but one is doubled anyway, FTS5's escape.
func QuoteTerms(terms []string) string {
	var b strings.Builder
	for i, term := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(term, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

// JSONStrings encodes strings as a JSON array for the queries' json_each.
func JSONStrings(ss []string) string {
	if ss == nil {
		ss = []string{}
	}
	b, _ := json.Marshal(ss) // strings always encode
	return string(b)
}
