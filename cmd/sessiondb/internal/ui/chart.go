package ui

import (
	"fmt"

	"github.com/sessiondb/sessiondb/store"
)

// chart is a horizontal bar chart drawn on the server as inline SVG (no
// script, no style attribute: geometry is SVG attributes, looks are
// classes in app.css). Each bar is stacked input, output and cache
// tokens, labelled with its numbers in text, and the page puts the same
// figures in a table beside it, so it reads without colour and without
// the picture.
type chart struct {
	Title  string
	Width  int
	Height int
	Bars   []bar
}

type bar struct {
	Label string
	Y     int
	BarY  int // the bar's top, below Y's text line
	Segs  []seg
	Total int64
	Cost  float64
	TextX int
}

type seg struct {
	Class string
	Name  string
	X, W  int
	Value int64
}

const (
	chartWidth = 720
	labelWidth = 200
	barArea    = 300
	rowHeight  = 28
)

func modelChart(title string, rows []store.ModelUsage) chart {
	c := chart{Title: title, Width: chartWidth}
	var most int64
	for _, m := range rows {
		most = max(most, m.InputTokens+m.OutputTokens+m.CacheReadTokens+m.CacheWriteTokens)
	}
	for i, m := range rows {
		label := m.Model
		if label == "" {
			label = "(unknown model)"
		}
		if m.Task != "" {
			label += " · " + m.Task
		}
		if m.Billing.Provider != "" { // one model through two routes: two bars, told apart
			label += " · " + m.Billing.Provider
		}
		b := bar{Label: cut(visible(label), 32), Y: i * rowHeight, BarY: i*rowHeight + 4, Cost: m.EstimatedCostUSD}
		x := labelWidth
		for _, s := range []seg{
			{Class: "in", Name: "input", Value: m.InputTokens},
			{Class: "out", Name: "output", Value: m.OutputTokens},
			{Class: "cache", Name: "cache", Value: m.CacheReadTokens + m.CacheWriteTokens},
		} {
			b.Total += s.Value
			if most > 0 {
				s.W = int(s.Value * barArea / most)
			}
			s.X = x
			x += s.W
			b.Segs = append(b.Segs, s)
		}
		b.TextX = x + 6
		c.Bars = append(c.Bars, b)
	}
	c.Height = len(rows)*rowHeight + 4
	return c
}

// String describes the chart in words, for its accessible name.
func (c chart) String() string {
	return fmt.Sprintf("%s: %d bars", c.Title, len(c.Bars))
}
