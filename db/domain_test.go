package db

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestDomainNamesAreAliased keeps domain.go complete: every exported name
// of package store (but Store, Options and New, which this package has its
// own of) has a name here, so a SQLite user never needs to import store.
func TestDomainNamesAreAliased(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "../store", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(fset, "domain.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	here := map[string]bool{}
	for name := range f.Scope.Objects {
		here[name] = true
	}
	own := map[string]bool{"Store": true, "Options": true, "New": true}
	n := 0
	for _, p := range pkgs {
		for _, file := range p.Files {
			for name, obj := range file.Scope.Objects {
				if !ast.IsExported(name) || own[name] || obj.Kind == ast.Fun {
					continue
				}
				n++
				if !here[name] {
					t.Errorf("store.%s has no name in package db (add it to domain.go)", name)
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("found only %d exported names in package store", n)
	}
}
