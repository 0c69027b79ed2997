package pg

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// docMethods is what go doc lists for a package's type Store: its
// methods, as go/doc (the library behind go doc) reads the package's
// source.
func docMethods(t *testing.T, dir, importPath string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	p, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range p.Types {
		if typ.Name == "Store" {
			var names []string
			for _, m := range typ.Methods {
				if m.Doc == "" {
					t.Errorf("%s: Store.%s has no doc comment", importPath, m.Name)
				}
				names = append(names, m.Name)
			}
			return names
		}
	}
	t.Fatalf("%s has no type Store", importPath)
	return nil
}

// TestGoDocListsEveryVerb: `go doc ./pg Store.X` answers, with its doc,
// for every verb of package store's Store, so a PostgreSQL user finds the
// whole API in the package they import (verbs_gen.go, from
// internal/verbgen, forwards them).
func TestGoDocListsEveryVerb(t *testing.T) {
	verbs := docMethods(t, "../store", "github.com/sessiondb/sessiondb/store")
	listed := docMethods(t, ".", "github.com/sessiondb/sessiondb/pg")
	for _, v := range verbs {
		if !slices.Contains(listed, v) {
			t.Errorf("go doc ./pg Store.%s: no method (run go generate ./... in the root module)", v)
		}
	}
}
