// Command verbgen writes an engine's forwarding methods for the domain's
// verbs: db/verbs_gen.go (and, with -pkg ../pg -out ../pg/verbs_gen.go,
// the PostgreSQL engine's). An engine's Store embeds *store.Store, and go
// doc lists no promoted methods, so without them `go doc ./db
// Store.AppendMessage` answers "no method or field" and a reader of the
// package they import never sees a verb. Each generated method has the
// domain method's signature (in the engine's own names where it aliases
// the domain's types) and its doc comment, and calls it. A method the
// engine writes by hand (Close, or a file's own operation) is left to it.
// Run it through `go generate ./...`; CI fails on a diff.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const storeImport = "github.com/sessiondb/sessiondb/store"

func main() {
	storeDir := flag.String("store", "../store", "package store's directory")
	pkgDir := flag.String("pkg", ".", "the engine package's directory")
	out := flag.String("out", "verbs_gen.go", "the file to write")
	flag.Parse()
	src, err := generate(*storeDir, *pkgDir, filepath.Base(*out))
	if err != nil {
		fmt.Fprintln(os.Stderr, "verbgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "verbgen:", err)
		os.Exit(1)
	}
}

// parseDir parses a package's non-test Go files, skipping the file being
// written, in name order.
func parseDir(fset *token.FileSet, dir, skip string) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var files []*ast.File
	for _, name := range names {
		base := filepath.Base(name)
		if strings.HasSuffix(base, "_test.go") || base == skip {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// isStoreMethod reports whether fn is a method with receiver *Store.
func isStoreMethod(fn *ast.FuncDecl) bool {
	if fn.Recv == nil || len(fn.Recv.List) != 1 {
		return false
	}
	star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Store"
}

// aliasOf reports whether expr is store.<name>: the engine's name for a
// domain name.
func aliasOf(expr ast.Expr, name string) bool {
	sel, ok := expr.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "store" && sel.Sel.Name == name
}

func generate(storeDir, pkgDir, outName string) ([]byte, error) {
	fset := token.NewFileSet()
	storeFiles, err := parseDir(fset, storeDir, "")
	if err != nil {
		return nil, err
	}
	pkgFiles, err := parseDir(fset, pkgDir, outName)
	if err != nil {
		return nil, err
	}
	if len(pkgFiles) == 0 {
		return nil, fmt.Errorf("no Go files in %s", pkgDir)
	}
	pkgName := pkgFiles[0].Name.Name

	// The domain's exported top-level names, and the import path of each
	// package its files name.
	domainNames := map[string]bool{}
	importPaths := map[string]string{"store": storeImport}
	var verbs []*ast.FuncDecl
	for _, f := range storeFiles {
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			name := filepath.Base(path)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			importPaths[name] = path
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					domainNames[d.Name.Name] = true
				}
				if isStoreMethod(d) && d.Name.IsExported() {
					verbs = append(verbs, d)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						domainNames[spec.Name.Name] = spec.Name.IsExported()
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							domainNames[n.Name] = n.IsExported()
						}
					}
				}
			}
		}
	}

	// What the engine has already: its own Store methods, and the domain
	// names it aliases (type X = store.X, var ErrX = store.ErrX).
	own := map[string]bool{}
	aliased := map[string]bool{}
	for _, f := range pkgFiles {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if isStoreMethod(d) {
					own[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						if spec.Assign.IsValid() && aliasOf(spec.Type, spec.Name.Name) {
							aliased[spec.Name.Name] = true
						}
					case *ast.ValueSpec:
						for i, n := range spec.Names {
							if i < len(spec.Values) && aliasOf(spec.Values[i], n.Name) {
								aliased[n.Name] = true
							}
						}
					}
				}
			}
		}
	}

	used := map[string]bool{}
	// local rewrites a domain type name to the engine's alias, or store.X.
	local := func(expr ast.Expr) ast.Expr {
		return rewrite(expr, func(id *ast.Ident) ast.Expr {
			if !domainNames[id.Name] || aliased[id.Name] {
				return id
			}
			used["store"] = true
			return &ast.SelectorExpr{X: ast.NewIdent("store"), Sel: ast.NewIdent(id.Name)}
		}, used)
	}

	var body bytes.Buffer
	for _, fn := range verbs {
		if own[fn.Name.Name] {
			continue
		}
		var params, args []string
		for i, field := range fn.Type.Params.List {
			names := field.Names
			if len(names) == 0 {
				names = []*ast.Ident{ast.NewIdent(fmt.Sprintf("arg%d", i))}
			}
			typ := local(field.Type)
			var ns []string
			for _, n := range names {
				ns = append(ns, n.Name)
				if _, variadic := field.Type.(*ast.Ellipsis); variadic {
					args = append(args, n.Name+"...")
				} else {
					args = append(args, n.Name)
				}
			}
			params = append(params, strings.Join(ns, ", ")+" "+render(fset, typ))
		}
		var results []string
		if fn.Type.Results != nil {
			for _, field := range fn.Type.Results.List {
				typ := render(fset, local(field.Type))
				n := max(len(field.Names), 1)
				for range n {
					results = append(results, typ)
				}
			}
		}
		body.WriteString(docComment(fn, aliased, domainNames))
		fmt.Fprintf(&body, "func (s *Store) %s(%s)", fn.Name.Name, strings.Join(params, ", "))
		switch len(results) {
		case 0:
			fmt.Fprintf(&body, " {\n\ts.Store.%s(%s)\n}\n\n", fn.Name.Name, strings.Join(args, ", "))
			continue
		case 1:
			fmt.Fprintf(&body, " %s", results[0])
		default:
			fmt.Fprintf(&body, " (%s)", strings.Join(results, ", "))
		}
		fmt.Fprintf(&body, " {\n\treturn s.Store.%s(%s)\n}\n\n", fn.Name.Name, strings.Join(args, ", "))
	}

	var out bytes.Buffer
	out.WriteString("// Code generated by db/internal/verbgen from package store's Store; DO NOT EDIT.\n\n")
	fmt.Fprintf(&out, "package %s\n\n", pkgName)
	var imports []string
	for name := range used {
		path, ok := importPaths[name]
		if !ok {
			return nil, fmt.Errorf("no import path for package %s", name)
		}
		imports = append(imports, fmt.Sprintf("%q", path))
	}
	slices.Sort(imports)
	fmt.Fprintf(&out, "import (\n%s\n)\n\n", strings.Join(imports, "\n"))
	out.WriteString("// The domain's verbs, each calling package store's method of the same\n" +
		"// name, so that go doc of this package lists and documents every verb.\n\n")
	out.Write(body.Bytes())
	return format.Source(out.Bytes())
}

// rewrite returns a copy of a type expression with fix applied to every
// bare identifier (a name declared in package store), recording the
// packages qualified identifiers name.
func rewrite(expr ast.Expr, fix func(*ast.Ident) ast.Expr, used map[string]bool) ast.Expr {
	switch e := expr.(type) {
	case *ast.Ident:
		return fix(e)
	case *ast.SelectorExpr:
		if pkg, ok := e.X.(*ast.Ident); ok {
			used[pkg.Name] = true
		}
		return e
	case *ast.StarExpr:
		return &ast.StarExpr{X: rewrite(e.X, fix, used)}
	case *ast.ArrayType:
		return &ast.ArrayType{Len: e.Len, Elt: rewrite(e.Elt, fix, used)}
	case *ast.MapType:
		return &ast.MapType{Key: rewrite(e.Key, fix, used), Value: rewrite(e.Value, fix, used)}
	case *ast.Ellipsis:
		return &ast.Ellipsis{Elt: rewrite(e.Elt, fix, used)}
	case *ast.ChanType:
		return &ast.ChanType{Dir: e.Dir, Value: rewrite(e.Value, fix, used)}
	case *ast.IndexExpr:
		return &ast.IndexExpr{X: rewrite(e.X, fix, used), Index: rewrite(e.Index, fix, used)}
	case *ast.IndexListExpr:
		idx := make([]ast.Expr, len(e.Indices))
		for i, x := range e.Indices {
			idx[i] = rewrite(x, fix, used)
		}
		return &ast.IndexListExpr{X: rewrite(e.X, fix, used), Indices: idx}
	case *ast.FuncType:
		return &ast.FuncType{Params: rewriteFields(e.Params, fix, used), Results: rewriteFields(e.Results, fix, used)}
	}
	return expr // interface and struct literals: none in the verbs' signatures
}

func rewriteFields(fl *ast.FieldList, fix func(*ast.Ident) ast.Expr, used map[string]bool) *ast.FieldList {
	if fl == nil {
		return nil
	}
	out := &ast.FieldList{}
	for _, f := range fl.List {
		out.List = append(out.List, &ast.Field{Names: f.Names, Type: rewrite(f.Type, fix, used)})
	}
	return out
}

func render(fset *token.FileSet, expr ast.Expr) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, expr); err != nil {
		panic(err)
	}
	return b.String()
}

// docLink matches a doc link to a top-level name: [Name], [*Name],
// [Name.Method].
var docLink = regexp.MustCompile(`\[(\*?)([A-Z][A-Za-z0-9_]*)((?:\.[A-Z][A-Za-z0-9_]*)?)\]`)

// docComment is the domain method's doc comment, its links to domain
// names the engine does not alias qualified with store., so they still
// lead somewhere.
func docComment(fn *ast.FuncDecl, aliased, domainNames map[string]bool) string {
	text := ""
	if fn.Doc != nil {
		text = fn.Doc.Text()
	}
	if strings.TrimSpace(text) == "" {
		text = fmt.Sprintf("%s is [store.Store.%s].\n", fn.Name.Name, fn.Name.Name)
	}
	text = docLink.ReplaceAllStringFunc(text, func(link string) string {
		m := docLink.FindStringSubmatch(link)
		name := m[2]
		if name == "Store" || aliased[name] || !domainNames[name] {
			return link
		}
		return "[" + m[1] + "store." + name + m[3] + "]"
	})
	var b strings.Builder
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		if line == "" {
			b.WriteString("//\n")
		} else {
			b.WriteString("// " + line + "\n")
		}
	}
	return b.String()
}
