package main

import (
	"testing"

	"github.com/rivo/uniseg"

	"github.com/sessiondb/sessiondb/db"
)

func TestFitWidth(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abc 日本語 wide", 10, "abc 日本…"},
		{styleMatch + "n" + styleReset + " 日本語 wide text", 10, styleMatch + "n" + styleReset + " 日本語 …"},
		{"x " + styleMatch + "needle needle" + styleReset, 8, "x " + styleMatch + "needl…" + styleReset},
		{"🔥🔥🔥🔥🔥🔥", 5, "🔥🔥…"},
	}
	for _, tt := range tests {
		got := fitWidth(tt.in, tt.width)
		if got != tt.want || uniseg.StringWidth(stripSGR(got)) > tt.width {
			t.Errorf("fitWidth(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

func TestHighlighterUsesMarksOnly(t *testing.T) {
	h := highlighter{color: true}
	snip := "a >>>fake<<< and >>>real<<< \x1b[31m"
	got := h.snippet(snip, []db.Mark{{Start: 20, End: 24}})
	want := "a >>>fake<<< and " + styleMatch + "real" + styleReset + " "
	if got != want {
		t.Errorf("snippet = %q, want %q", got, want)
	}
	if got := h.snippet(snip, []db.Mark{{Start: 1, End: 99}}); got != oneLine(snip) {
		t.Errorf("marks outside the snippet: %q, want it plain", got)
	}
	if got, want := (highlighter{}).snippet(snip, []db.Mark{{Start: 20, End: 24}}), "a >>>fake<<< and real "; got != want {
		t.Errorf("plain: %q, want %q (the match's markers gone, stored text kept)", got, want)
	}
	if got := (highlighter{markers: true}).snippet(snip, []db.Mark{{Start: 20, End: 24}}); got != oneLine(snip) {
		t.Errorf("with markers: %q, want the snippet as the store made it", got)
	}
}
