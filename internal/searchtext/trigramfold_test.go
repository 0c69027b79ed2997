package searchtext

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// The fold and the length as the rule states them, one character at a
// time: the fast paths of AppendTrigramFolded and TrigramLength must give
// the same bytes and counts on every input, valid UTF-8 or not.
func trigramFoldedRuneByRune(s []byte) []byte {
	var buf []byte
	for len(s) > 0 {
		c, size := utf8.DecodeRune(s)
		s = s[size:]
		if c != 0 {
			buf = utf8.AppendRune(buf, TrigramRune(c))
		}
	}
	return buf
}

func trigramLengthRuneByRune(s []byte) int {
	n := 0
	for len(s) > 0 {
		c, size := utf8.DecodeRune(s)
		s = s[size:]
		if c != 0 {
			n++
		}
	}
	return max(n-(TrigramLen-1), 0)
}

func TestAppendTrigramFolded_SameAsRuneByRune(t *testing.T) {
	inputs := [][]byte{
		nil, {0}, []byte("Kubernetes ERROR: Connection Refused\x00 at /API/v1"),
		[]byte("設定ファイル ÀÉÎÕÜ ß ẞ İ ı ǅ Σας"), []byte("\xff\xfe\xc3 \xe2\x82 half \xf0\x9f"),
		[]byte("emoji 🙂 𝐀𝐁 𐐀𐐨 (supplementary plane)"),
	}
	var all []byte // every ASCII byte, and every BMP character
	for b := range 0x80 {
		all = append(all, byte(b))
	}
	for c := rune(0x80); c <= 0xFFFF; c++ {
		all = utf8.AppendRune(all, c)
	}
	inputs = append(inputs, all)
	rng := rand.New(rand.NewPCG(3, 7))
	pieces := []string{"a", "Z", "\x00", "é", "É", "日", "\xff", "\xe2\x82", "🙂", "ẞ", " ", "İ"}
	for range 2000 {
		var b []byte
		for range rng.IntN(40) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		if got, want := AppendTrigramFolded([]byte("prefix"), in), append([]byte("prefix"), trigramFoldedRuneByRune(in)...); !bytes.Equal(got, want) {
			t.Errorf("AppendTrigramFolded(%q) = %q, want %q", in, got, want)
		}
		if got, want := TrigramLength(in), trigramLengthRuneByRune(in); got != want {
			t.Errorf("TrigramLength(%q) = %d, want %d", in, got, want)
		}
	}
}

func BenchmarkAppendTrigramFolded(b *testing.B) {
	text := bytes.Repeat([]byte("The deploy failed: connection refused by kubernetes api server. "), 16)
	var buf []byte
	for b.Loop() {
		buf = AppendTrigramFolded(buf[:0], text)
	}
}
