package searchtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// The trigram index keeps no positions (migration 13), so it finds the
// messages that hold every trigram of a term and cannot rank them: its
// bm25 is 0 for every row. Both jobs move here, on the candidates' text:
// the exact test the index no longer makes (the folded term is a
// substring of the folded content or tool text), and a score in its
// place.
//
// The score is BM25's term-frequency part, k1 = 1.2 and b = 0.75 as
// FTS5's bm25 — a term found more often in a shorter message ranks
// higher — summed over the terms, without BM25's rarity weight between
// terms (which a scalar function over one row cannot know). Length is
// counted as the index counted it, in trigrams, and normalised by the
// ranked window's average, not the whole table's: for a query of one
// term the order is bm25's over a positional index but for that average.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// TrigramTerms tests and scores candidates for a query's long terms (as
// TrigramMatch folded them). It reuses its buffers: one per statement,
// never shared between goroutines.
type TrigramTerms struct {
	terms         [][]byte
	content, tool []byte
}

// ParseTrigramTerms reads TrigramMatch's JSON array of folded terms.
func ParseTrigramTerms(jsonTerms string) (*TrigramTerms, error) {
	var terms []string
	if err := json.Unmarshal([]byte(jsonTerms), &terms); err != nil {
		return nil, fmt.Errorf("trigram terms: %w", err)
	}
	m := &TrigramTerms{}
	for _, t := range terms {
		m.terms = append(m.terms, []byte(t))
	}
	return m, nil
}

// TrigramLength is a text's length as the trigram index counts it for
// bm25: its trigrams (characters, NUL skipped, less two). The ranked
// window's average is taken over it (sessiondb_trigram_length).
func TrigramLength(s []byte) int {
	// Every character but NUL; utf8.RuneCount counts an invalid byte as
	// one character, as decoding one at a time does.
	n := utf8.RuneCount(s) - bytes.Count(s, []byte{0})
	return max(n-(TrigramLen-1), 0)
}

// countFolded counts the occurrences of term in text, both folded,
// overlapping ones included (as a phrase matches at every position).
func countFolded(text, term []byte) int {
	n := 0
	for {
		i := bytes.Index(text, term)
		if i < 0 {
			return n
		}
		n++
		_, size := utf8.DecodeRune(text[i:])
		text = text[i+size:]
	}
}

// Matches reports whether every term is a substring of the folded
// content or the folded tool text: whether a positional trigram index
// would have matched the message. toolText is read only when the content
// lacks a term, and after the content is folded (its bytes may be the
// driver's, valid until the next read).
func (m *TrigramTerms) Matches(content []byte, toolText func() []byte) bool {
	m.content = AppendTrigramFolded(m.content[:0], content)
	folded := false
	for _, term := range m.terms {
		if bytes.Contains(m.content, term) {
			continue
		}
		if !folded {
			m.tool, folded = AppendTrigramFolded(m.tool[:0], toolText()), true
		}
		if !bytes.Contains(m.tool, term) {
			return false
		}
	}
	return true
}

// Score is a message's score (higher is better; 0 when it does not
// match): see the constants above. avgLen is the ranked messages' average
// TrigramLength of content plus tool text.
func (m *TrigramTerms) Score(content []byte, toolText func() []byte, avgLen float64) float64 {
	length := TrigramLength(content)
	m.content = AppendTrigramFolded(m.content[:0], content)
	tool := toolText()
	length += TrigramLength(tool)
	m.tool = AppendTrigramFolded(m.tool[:0], tool)
	norm := bm25K1 * (1 - bm25B + bm25B*float64(length)/max(avgLen, 1))
	score := 0.0
	for _, term := range m.terms {
		tf := float64(countFolded(m.content, term) + countFolded(m.tool, term))
		if tf == 0 {
			return 0
		}
		score += tf * (bm25K1 + 1) / (tf + norm)
	}
	return score
}
