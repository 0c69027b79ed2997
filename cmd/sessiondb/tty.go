package main

// tty.go shapes text output for a person at a terminal: search matches in
// bold colour (from the hits' Marks, so stored text holding ">>>" cannot
// fake one), table rows cut to the terminal's width. In a pipe the output
// is plain: no escape sequences, full rows, the text as stored (search
// --marks puts matches between >>> and <<<).

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rivo/uniseg"
	"golang.org/x/term"

	"github.com/sessiondb/sessiondb/db"
)

const (
	styleMatch = "\x1b[1;33m" // bold yellow
	styleReset = "\x1b[0m"
)

// stdoutTerminal reports whether standard output is a terminal, and its
// width in columns ($COLUMNS wins, as shells set it; 0 when unknown).
func (e *env) stdoutTerminal() (ok bool, width int) {
	f, isFile := e.stdout.(*os.File)
	if !isFile || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return true, n
	}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return true, w
	}
	return true, 0
}

// highlighter renders snippets: colour on a terminal (unless $NO_COLOR,
// then the >>>markers<<<), the >>>markers<<< with --marks, else plain text
// (a pipe: the words as stored, nothing added).
type highlighter struct{ color, markers bool }

func (e *env) highlighter(markers bool) highlighter {
	tty, _ := e.stdoutTerminal()
	color := tty && !e.json && os.Getenv("NO_COLOR") == "" && !markers
	return highlighter{color: color, markers: markers || (tty && !color)}
}

// snippet returns a hit's snippet for a table cell, inert (oneLine): in
// colour with every mark styled, or plain, the markers around each mark
// dropped; with markers, as the store made it.
func (h highlighter) snippet(s string, marks []db.Mark) string {
	if h.markers || len(marks) == 0 {
		return oneLine(s)
	}
	var b strings.Builder
	pos := 0
	for _, m := range marks {
		open, end := m.Start-len(">>>"), m.End+len("<<<")
		if open < pos || end > len(s) || m.Start > m.End {
			return oneLine(s) // not marks of this snippet: show it as it is
		}
		b.WriteString(inert(s[pos:open]))
		if h.color {
			b.WriteString(styleMatch + inert(s[m.Start:m.End]) + styleReset)
		} else {
			b.WriteString(inert(s[m.Start:m.End]))
		}
		pos = end
	}
	b.WriteString(inert(s[pos:]))
	return b.String()
}

// fitted runs print and, on a terminal of known width, cuts every line it
// printed to that width (with "…"), so rows never wrap.
func (e *env) fitted(print func(w io.Writer) error) error {
	tty, width := e.stdoutTerminal()
	if !tty || width == 0 {
		return print(e.stdout)
	}
	var buf bytes.Buffer
	if err := print(&buf); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		nl := strings.HasSuffix(line, "\n")
		line = fitWidth(strings.TrimSuffix(line, "\n"), width)
		if nl {
			line += "\n"
		}
		if _, err := io.WriteString(e.stdout, line); err != nil {
			return err
		}
	}
	return nil
}

// fitWidth cuts line to at most width terminal columns, counting wide
// characters as two and the CLI's own SGR sequences as none, ending a cut
// line with "…" (and a reset, if a style was open).
func fitWidth(line string, width int) string {
	if uniseg.StringWidth(stripSGR(line)) <= width {
		return line
	}
	var b strings.Builder
	used, styled := 0, false
	state := -1
	for rest := line; rest != ""; {
		if strings.HasPrefix(rest, "\x1b[") {
			end := strings.IndexByte(rest, 'm')
			if end < 0 {
				break
			}
			seq := rest[:end+1]
			b.WriteString(seq)
			styled = seq != styleReset
			rest, state = rest[end+1:], -1
			continue
		}
		var cluster string
		var w int
		cluster, rest, w, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if used+w > width-1 {
			break
		}
		b.WriteString(cluster)
		used += w
	}
	b.WriteString("…")
	if styled {
		b.WriteString(styleReset)
	}
	return b.String()
}

// stripSGR removes the CLI's own style sequences (ESC [ … m).
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for s != "" {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], 'm')
		if end < 0 {
			break
		}
		s = s[i+end+1:]
	}
	return b.String()
}
