package rawopen_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/sessiondb/sessiondb/lint/rawopen"
)

func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), rawopen.Analyzer, "a", "alias", "dot", "app/db", "gen", "withtests")
}

func TestAllowFlag(t *testing.T) {
	// With store.go allowed too, the "sneaky" open is no longer reported;
	// durable.go is no longer allowed, so its opens are.
	if err := rawopen.Analyzer.Flags.Set("allow", "app/db/store.go"); err != nil {
		t.Fatal(err)
	}
	defer rawopen.Analyzer.Flags.Set("allow", "db/durable.go")
	results := analysistest.Run(&quiet{T: t}, analysistest.TestData(), rawopen.Analyzer, "app/db")
	var files []string
	for _, r := range results {
		for _, d := range r.Diagnostics {
			files = append(files, r.Pass.Fset.Position(d.Pos).Filename)
		}
	}
	if len(files) != 2 {
		t.Fatalf("got %d diagnostics (%v), want 2 in durable.go", len(files), files)
	}
	for _, f := range files {
		if !hasSuffix(f, "app/db/durable.go") {
			t.Errorf("diagnostic in %s, want only durable.go", f)
		}
	}
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// quiet swallows analysistest's complaints about unmatched // want lines,
// for a run that deliberately changes what is reported.
type quiet struct {
	*testing.T
}

func (q *quiet) Errorf(format string, args ...any) {}
