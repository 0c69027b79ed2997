package directive

import (
	"go/token"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFileIn(t *testing.T) {
	fset := token.NewFileSet()
	pos := func(name string) token.Pos { return token.Pos(fset.AddFile(name, -1, 10).Base()) }
	tests := []struct {
		file  string
		allow []string
		want  bool
	}{
		{"/repo/db/durable.go", []string{"db/durable.go"}, true},
		{"/repo/db/durable.go", []string{"/db/durable.go/"}, true},
		{"/repo/otherdb/durable.go", []string{"db/durable.go"}, false},
		{"/repo/db/durable_test.go", []string{"db/durable.go"}, false},
		{"/repo/db/tx.go", []string{"db/durable.go", "db/tx.go"}, true},
		{"/repo/db/tx.go", []string{""}, false},
		{"db/tx.go", []string{"db/tx.go"}, true},
	}
	for _, tt := range tests {
		if got := FileIn(fset, pos(tt.file), tt.allow); got != tt.want {
			t.Errorf("FileIn(%s, %q) = %v, want %v", tt.file, tt.allow, got, tt.want)
		}
	}
}

func TestSplitList(t *testing.T) {
	if diff := cmp.Diff([]string{"a.go", "b/c.go"}, SplitList(" a.go, ,b/c.go ,")); diff != "" {
		t.Error(diff)
	}
}

func TestAnalyzerDoc(t *testing.T) {
	src := "// Package x does.\n//\n// # Analyzer x\n//\n// x: title\n//\n// Body.\npackage x\n"
	if got, want := AnalyzerDoc(src, "x"), "x: title\n\nBody."; got != want {
		t.Errorf("AnalyzerDoc = %q, want %q", got, want)
	}
}
