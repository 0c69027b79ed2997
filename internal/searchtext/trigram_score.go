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
// terms (which a scalar function over one row cannot know). For a query
// of one term it orders messages as bm25 over a positional index did,
// up to the average length it normalises by (the ranked window's, not
// the whole table's).
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

// fold appends s folded as the trigram tokenizer folds it (TrigramRune
// per character) to buf[:0].
func fold(buf, s []byte) []byte {
	buf = buf[:0]
	for len(s) > 0 {
		c, size := utf8.DecodeRune(s)
		s = s[size:]
		buf = utf8.AppendRune(buf, TrigramRune(c))
	}
	return buf
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
// would have matched the message.
func (m *TrigramTerms) Matches(content, toolText []byte) bool {
	m.content = fold(m.content, content)
	folded := false
	for _, term := range m.terms {
		if bytes.Contains(m.content, term) {
			continue
		}
		if !folded {
			m.tool, folded = fold(m.tool, toolText), true
		}
		if !bytes.Contains(m.tool, term) {
			return false
		}
	}
	return true
}

// Score is a message's score (higher is better; 0 when it does not
// match): see the constants above. avgLen is the average length in
// characters, content and tool text, of the messages ranked together.
func (m *TrigramTerms) Score(content, toolText []byte, avgLen float64) float64 {
	m.content, m.tool = fold(m.content, content), fold(m.tool, toolText)
	length := float64(utf8.RuneCount(content) + utf8.RuneCount(toolText))
	norm := bm25K1 * (1 - bm25B + bm25B*length/max(avgLen, 1))
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
