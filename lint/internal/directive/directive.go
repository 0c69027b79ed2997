// Package directive finds the escape annotations and allowed files shared
// by sessiondb's analyzers.
//
// An escape is a line comment naming the analyzer and a reason, either at
// the end of the offending line (covering that line) or alone on the line
// above it (covering the next line):
//
//	//sessiondb:allow rawopen -- plays another process holding the lock
//
// Each escape is visible in review; one without a reason is itself reported.
package directive

import (
	"bytes"
	"go/token"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"
)

const prefix = "//sessiondb:allow "

// Escapes indexes a package's escape comments by file and line.
type Escapes struct {
	fset  *token.FileSet
	lines map[string]map[int]escape // file name → line → escape
}

type escape struct {
	analyzers []string
	reason    string
	pos       token.Pos
	alone     bool // on a line of its own: it covers the next line
}

// Find collects every escape comment in the pass's files.
func Find(pass *analysis.Pass) *Escapes {
	e := &Escapes{fset: pass.Fset, lines: map[string]map[int]escape{}}
	for _, f := range pass.Files {
		for _, group := range f.Comments {
			for _, c := range group.List {
				text, ok := strings.CutPrefix(c.Text, prefix)
				if !ok {
					continue
				}
				names, reason, _ := strings.Cut(text, "--")
				p := pass.Fset.Position(c.Pos())
				alone := false
				if src, err := pass.ReadFile(p.Filename); err == nil && p.Offset <= len(src) {
					start := bytes.LastIndexByte(src[:p.Offset], '\n') + 1
					alone = len(bytes.TrimSpace(src[start:p.Offset])) == 0
				}
				m := e.lines[p.Filename]
				if m == nil {
					m = map[int]escape{}
					e.lines[p.Filename] = m
				}
				m[p.Line] = escape{analyzers: strings.Fields(names), reason: strings.TrimSpace(reason), pos: c.Pos(), alone: alone}
			}
		}
	}
	return e
}

// Allowed reports whether the node at pos is escaped for analyzer. An
// escape without a reason does not count, and is reported.
func (e *Escapes) Allowed(pass *analysis.Pass, analyzer string, pos token.Pos) bool {
	p := e.fset.Position(pos)
	for _, line := range []int{p.Line, p.Line - 1} {
		esc, ok := e.lines[p.Filename][line]
		if !ok || !contains(esc.analyzers, analyzer) || (line != p.Line && !esc.alone) {
			continue
		}
		if esc.reason == "" {
			pass.Reportf(esc.pos, "sessiondb:allow %s needs a reason after \"--\": every exception must say why in review", analyzer)
			return false
		}
		return true
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Reporter returns a Reportf for analyzer that drops diagnostics escaped
// by an annotation. Escapes are read only when there is something to report.
func Reporter(pass *analysis.Pass, analyzer string) func(pos token.Pos, format string, args ...any) {
	var escapes *Escapes
	return func(pos token.Pos, format string, args ...any) {
		if escapes == nil {
			escapes = Find(pass)
		}
		if !escapes.Allowed(pass, analyzer, pos) {
			pass.Reportf(pos, format, args...)
		}
	}
}

// FileIn reports whether the file holding pos ends with one of the
// slash-separated path suffixes in list (e.g. "db/durable.go").
func FileIn(fset *token.FileSet, pos token.Pos, list []string) bool {
	name := filepath.ToSlash(fset.Position(pos).Filename)
	for _, suffix := range list {
		suffix = strings.Trim(filepath.ToSlash(strings.TrimSpace(suffix)), "/")
		if suffix != "" && (name == suffix || strings.HasSuffix(name, "/"+suffix)) {
			return true
		}
	}
	return false
}

// SplitList parses a comma-separated flag value.
func SplitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// AnalyzerDoc extracts an analyzer's documentation from its doc.go source:
// the text after the "# Analyzer NAME" heading, comment markers removed.
func AnalyzerDoc(src, name string) string {
	_, after, ok := strings.Cut(src, "// # Analyzer "+name+"\n")
	if !ok {
		panic("directive: doc.go has no \"# Analyzer " + name + "\" section")
	}
	var b strings.Builder
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "//") {
			break
		}
		b.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "//"), " ") + "\n")
	}
	return strings.TrimSpace(b.String())
}
