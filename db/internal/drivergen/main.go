// Command drivergen writes the typed query half of the engine seam from
// sqlc's SQLite output (db/gen): store/driver/queries.go, the Queries
// interface every engine implements with its row and parameter types, and
// db/executor_gen.go, the SQLite engine's implementation of it over
// db/gen. With -pg it writes pg/executor_gen.go instead: the PostgreSQL
// engine's implementation over pg/internal/pggen, whose types have the
// same names and fields (pg/compat_test.go holds them to it). Run it
// through `go generate ./...` after sqlc; CI fails on a diff.
//
// The interface is derived rather than written so that the domain's view of
// storage cannot drift from the queries the SQLite engine runs: a query
// added to queries/ appears in the interface, and an engine that lacks it
// no longer compiles. The types are copies with the same fields, so the
// SQLite engine converts between them with a plain conversion, and other
// engines generate structs of the same shape.
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
	"slices"
	"strings"
)

// engineOnly lists the queries of db/gen that are the SQLite engine's own:
// the FTS5 index and its queue and the search routes over it. They stay out
// of the neutral interface.
var engineOnly = map[string]bool{}

// engineOnlyFiles are the query files whose every query is engine-only,
// except those named in neutralAnyway.
var engineOnlyFiles = []string{"fts.sql.go", "search.sql.go"}

// neutralAnyway are queries in engineOnlyFiles the domain needs on every
// engine: a search hit's neighbours.
var neutralAnyway = map[string]bool{
	"MessageContextBefore": true,
	"MessageContextAfter":  true,
}

type method struct {
	name   string
	file   string
	doc    string
	params []*ast.Field // after ctx and db
	result []ast.Expr   // the non-error results
}

func main() {
	genDir := flag.String("gen", "gen", "sqlc's output directory")
	driverOut := flag.String("driver", "../store/driver/queries.go", "the interface file to write")
	engineOut := flag.String("engine", "executor_gen.go", "the SQLite implementation to write")
	pgOut := flag.String("pg", "", "write only the PostgreSQL implementation, to this file")
	flag.Parse()
	if err := run(*genDir, *driverOut, *engineOut, *pgOut); err != nil {
		fmt.Fprintln(os.Stderr, "drivergen:", err)
		os.Exit(1)
	}
}

// target is an engine whose executor drivergen writes.
type target struct {
	pkg      string // the engine's package
	genPkg   string // the package of its generated queries, as named in code
	genPath  string // and its import path
	executor string // the type's declaration and doc
	call     string // how a method reaches the generated query: "queries" or "e.q"
	mapErr   string // the engine's one error-mapping function
}

var sqliteTarget = target{
	pkg: "db", genPkg: "gen", genPath: "github.com/sessiondb/sessiondb/db/gen",
	executor: "// executor runs the neutral queries on one SQLite connection or\n" +
		"// transaction, mapping each driver error to a sentinel (mapDriverError).\n" +
		"type executor struct{ db gen.DBTX }\n\nvar _ driver.Queries = executor{}\n",
	call: "queries", mapErr: "mapDriverError",
}

var pgTarget = target{
	pkg: "pg", genPkg: "pggen", genPath: "github.com/sessiondb/sessiondb/pg/internal/pggen",
	executor: "// executor runs the neutral queries on one PostgreSQL connection,\n" +
		"// pool or transaction (db), mapping each error to a sentinel (mapError).\n" +
		"type executor struct {\n\tq  *pggen.Queries\n\tdb pggen.DBTX\n}\n\nvar _ driver.Queries = executor{}\n",
	call: "e.q", mapErr: "mapError",
}

func run(genDir, driverOut, engineOut, pgOut string) error {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, genDir, nil, parser.ParseComments)
	if err != nil {
		return err
	}
	pkg, ok := pkgs["gen"]
	if !ok {
		return fmt.Errorf("no package gen in %s", genDir)
	}
	types := map[string]*ast.TypeSpec{}
	var methods []method
	files := make([]string, 0, len(pkg.Files))
	for name := range pkg.Files {
		files = append(files, name)
	}
	slices.Sort(files)
	for _, name := range files {
		f := pkg.Files[name]
		base := filepath.Base(name)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name != "DBTX" && ts.Name.Name != "Queries" {
						types[ts.Name.Name] = ts
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || !d.Name.IsExported() {
					continue
				}
				if slices.Contains(engineOnlyFiles, base) && !neutralAnyway[d.Name.Name] || engineOnly[d.Name.Name] {
					continue
				}
				m := method{name: d.Name.Name, file: strings.TrimSuffix(base, ".go")}
				var params []*ast.Field
				for _, p := range d.Type.Params.List {
					for _, n := range p.Names {
						params = append(params, &ast.Field{Names: []*ast.Ident{n}, Type: p.Type})
					}
				}
				if len(params) < 2 {
					return fmt.Errorf("%s: want (ctx, db, ...) parameters", m.name)
				}
				m.params = params[2:]
				for _, r := range d.Type.Results.List {
					if id, ok := r.Type.(*ast.Ident); ok && id.Name == "error" {
						continue
					}
					m.result = append(m.result, r.Type)
				}
				if len(m.result) > 1 {
					return fmt.Errorf("%s: more than one result besides error", m.name)
				}
				methods = append(methods, m)
			}
		}
	}
	slices.SortFunc(methods, func(a, b method) int { return strings.Compare(a.name, b.name) })

	used := map[string]bool{}
	var mark func(e ast.Expr)
	mark = func(e ast.Expr) {
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if ts, ok := types[id.Name]; ok && !used[id.Name] {
					used[id.Name] = true
					mark(ts.Type)
				}
			}
			return true
		})
	}
	for _, m := range methods {
		for _, p := range m.params {
			mark(p.Type)
		}
		for _, r := range m.result {
			mark(r)
		}
	}

	if pgOut != "" {
		src, err := engineFile(fset, types, methods, pgTarget)
		if err != nil {
			return err
		}
		return os.WriteFile(pgOut, src, 0o644)
	}
	driverSrc, err := driverFile(fset, types, used, methods)
	if err != nil {
		return err
	}
	engineSrc, err := engineFile(fset, types, methods, sqliteTarget)
	if err != nil {
		return err
	}
	if err := os.WriteFile(driverOut, driverSrc, 0o644); err != nil {
		return err
	}
	return os.WriteFile(engineOut, engineSrc, 0o644)
}

const header = "// Code generated by drivergen from db/gen. DO NOT EDIT.\n\n"

func expr(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, fset, e)
	return b.String()
}

// qualify prints e with every generated type name prefixed by pkg.
func qualify(fset *token.FileSet, types map[string]*ast.TypeSpec, e ast.Expr, pkg string) string {
	s := expr(fset, e)
	for _, p := range []string{"[]*", "[]", "*", ""} {
		if name, ok := strings.CutPrefix(s, p); ok && types[name] != nil {
			return p + pkg + "." + name
		}
	}
	return s
}

func driverFile(fset *token.FileSet, types map[string]*ast.TypeSpec, used map[string]bool, methods []method) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("package driver\n\nimport \"context\"\n\n")
	b.WriteString("// Queries are the typed operations the domain runs, one per query of\n")
	b.WriteString("// queries/*.sql that every engine has. A query that finds no row returns\n")
	b.WriteString("// ErrNotFound; every other error carries at most one of this package's\n")
	b.WriteString("// sentinels (ErrExists for a unique violation, ErrNotFound for a missing\n")
	b.WriteString("// parent, ErrInvalidInput for a failed check).\n")
	b.WriteString("type Queries interface {\n")
	for _, m := range methods {
		fmt.Fprintf(&b, "\t%s(ctx context.Context", m.name)
		for _, p := range m.params {
			fmt.Fprintf(&b, ", %s %s", p.Names[0].Name, expr(fset, p.Type))
		}
		b.WriteString(") ")
		if len(m.result) == 1 {
			fmt.Fprintf(&b, "(%s, error)", expr(fset, m.result[0]))
		} else {
			b.WriteString("error")
		}
		fmt.Fprintf(&b, " // %s\n", m.file)
	}
	b.WriteString("}\n")
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		ts := types[n]
		fmt.Fprintf(&b, "\ntype %s %s\n", n, expr(fset, stripTags(ts.Type)))
	}
	return format.Source(b.Bytes())
}

// stripTags drops struct tags: the driver's types are not encoded.
func stripTags(e ast.Expr) ast.Expr {
	st, ok := e.(*ast.StructType)
	if !ok {
		return e
	}
	out := &ast.StructType{Fields: &ast.FieldList{}}
	for _, f := range st.Fields.List {
		out.Fields.List = append(out.Fields.List, &ast.Field{Names: f.Names, Type: f.Type})
	}
	return out
}

func engineFile(fset *token.FileSet, types map[string]*ast.TypeSpec, methods []method, tg target) ([]byte, error) {
	var b bytes.Buffer
	sliceTypes := map[string]bool{}
	b.WriteString(header)
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"context\"\n\n\t%q\n\t\"github.com/sessiondb/sessiondb/internal/rowcast\"\n\t\"github.com/sessiondb/sessiondb/store/driver\"\n)\n\n", tg.pkg, tg.genPath)
	b.WriteString(tg.executor)
	for _, m := range methods {
		fmt.Fprintf(&b, "\nfunc (e executor) %s(ctx context.Context", m.name)
		args := []string{"ctx", "e.db"}
		for _, p := range m.params {
			name := p.Names[0].Name
			fmt.Fprintf(&b, ", %s %s", name, qualify(fset, types, p.Type, "driver"))
			if q := qualify(fset, types, p.Type, tg.genPkg); strings.HasPrefix(q, tg.genPkg+".") {
				args = append(args, q+"("+name+")")
			} else {
				args = append(args, name)
			}
		}
		call := fmt.Sprintf("%s.%s(%s)", tg.call, m.name, strings.Join(args, ", "))
		if len(m.result) == 0 {
			fmt.Fprintf(&b, ") error {\n\treturn %s(%s)\n}\n", tg.mapErr, call)
			continue
		}
		res := qualify(fset, types, m.result[0], "driver")
		fmt.Fprintf(&b, ") (%s, error) {\n\tr, err := %s\n", res, call)
		switch {
		case strings.HasPrefix(res, "[]driver."):
			elem := strings.TrimPrefix(res, "[]driver.")
			fmt.Fprintf(&b, "\treturn rowcast.Same[%s.%s, driver.%s](r), %s(err)\n}\n", tg.genPkg, elem, elem, tg.mapErr)
			sliceTypes[elem] = true
		case strings.HasPrefix(res, "driver."):
			fmt.Fprintf(&b, "\treturn %s(r), %s(err)\n}\n", res, tg.mapErr)
		default:
			fmt.Fprintf(&b, "\treturn r, %s(err)\n}\n", tg.mapErr)
		}
	}
	elems := make([]string, 0, len(sliceTypes))
	for e := range sliceTypes {
		elems = append(elems, e)
	}
	slices.Sort(elems)
	b.WriteString("\n// Each row type converts to its driver twin, which is what lets\n")
	b.WriteString("// rowcast.Same reuse a slice of one as a slice of the other.\nvar (\n")
	for _, e := range elems {
		fmt.Fprintf(&b, "\t_ = driver.%s(%s.%s{})\n", e, tg.genPkg, e)
	}
	b.WriteString(")\n")
	return format.Source(b.Bytes())
}
