package pg

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The SQLite engine's query files that have no Postgres counterpart: FTS5
// upkeep, and search over FTS5 (pg/search.go builds its own), except the
// queries the domain runs around a hit on every engine (searchShared).
var sqliteOnlyFiles = []string{"fts.sql.go", "search.sql.go"}

// The engine's own query files, which SQLite has no counterpart of: an
// append's rows in one multi-row INSERT (insertbatch.go; SQLite's inserts
// are calls into the same process, with no round trip or statement setup
// to share).
var pgOnlyFiles = []string{"appendmany.sql.go"}

// searchShared are the queries of the SQLite engine's search.sql that
// pg/queries/search.sql ports.
var searchShared = []string{"MessageContextBefore", "MessageContextAfter"}

// Differences the Postgres query set keeps on purpose, by Type.Field, with
// the reason. Each must still be a difference (a fixed one fails the test,
// so the list never goes stale).
var allowedDifferences = map[string]string{}

// goAPI is what a generated package offers the driver: its struct types
// (field names and types in order) and the methods of Queries (parameter
// and result types, the db argument left out).
type goAPI struct {
	structs map[string][]string // name -> "Field type" in order
	methods map[string]string   // name -> "(params) results"
}

func parseGenerated(t *testing.T, dir string, skip []string) goAPI {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated files in %s: %v", dir, err)
	}
	api := goAPI{structs: map[string][]string{}, methods: map[string]string{}}
	fset := token.NewFileSet()
	for _, path := range files {
		if slices.Contains(skip, filepath.Base(path)) {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					var fields []string
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							fields = append(fields, n.Name+" "+types.ExprString(fl.Type))
						}
					}
					api.structs[ts.Name.Name] = fields
				}
			case *ast.FuncDecl:
				if d.Recv == nil || types.ExprString(d.Recv.List[0].Type) != "*Queries" {
					continue
				}
				var params, results []string
				for _, p := range d.Type.Params.List {
					if typ := types.ExprString(p.Type); typ != "DBTX" {
						for range max(1, len(p.Names)) {
							params = append(params, typ)
						}
					}
				}
				if d.Type.Results != nil {
					for _, r := range d.Type.Results.List {
						results = append(results, types.ExprString(r.Type))
					}
				}
				api.methods[d.Name.Name] = "(" + strings.Join(params, ", ") + ") (" + strings.Join(results, ", ") + ")"
			}
		}
	}
	return api
}

// TestGeneratedShapesMatchSQLite holds the Postgres engine's generated
// code to db/gen's shapes: every ported query exists under the same name
// with the same parameter and result types, and every struct the two share
// has the same fields, types and order, so the driver converts one into
// the other with a plain Go conversion.
func TestGeneratedShapesMatchSQLite(t *testing.T) {
	sqlite := parseGenerated(t, filepath.Join("..", "db", "gen"), append([]string{"db.go"}, sqliteOnlyFiles...))
	search := parseGenerated(t, filepath.Join("..", "db", "gen"), []string{"db.go", "fts.sql.go"})
	for _, name := range searchShared {
		sig, ok := search.methods[name]
		if !ok {
			t.Errorf("searchShared names %s, which db/gen no longer has", name)
		}
		sqlite.methods[name] = sig
	}
	for name, fields := range search.structs {
		sqlite.structs[name] = fields
	}
	pg := parseGenerated(t, filepath.Join("internal", "pggen"), append([]string{"db.go"}, pgOnlyFiles...))

	var diffs []string
	used := map[string]bool{}
	for name, sig := range sqlite.methods {
		pgSig, ok := pg.methods[name]
		switch {
		case !ok:
			diffs = append(diffs, "method "+name+": missing in pggen")
		case pgSig != sig:
			diffs = append(diffs, "method "+name+": db/gen "+sig+", pggen "+pgSig)
		}
		for _, word := range strings.FieldsFunc(sig, func(r rune) bool { return strings.ContainsRune("()[]*, ", r) }) {
			if _, isStruct := sqlite.structs[word]; isStruct {
				used[word] = true
			}
		}
	}
	for name := range pg.methods {
		if _, ok := sqlite.methods[name]; !ok {
			diffs = append(diffs, "method "+name+": in pggen only")
		}
	}

	allowed := map[string]bool{}
	for name, pgFields := range pg.structs {
		sqliteFields, ok := sqlite.structs[name]
		if !ok {
			continue // pggen's own (none expected, but a model of a table SQLite lacks would be fine)
		}
		delete(used, name)
		if len(pgFields) != len(sqliteFields) {
			diffs = append(diffs, "struct "+name+": db/gen {"+strings.Join(sqliteFields, "; ")+"}, pggen {"+strings.Join(pgFields, "; ")+"}")
			continue
		}
		for i := range pgFields {
			if pgFields[i] == sqliteFields[i] {
				continue
			}
			key := name + "." + strings.Fields(sqliteFields[i])[0]
			if _, ok := allowedDifferences[key]; ok && strings.Fields(pgFields[i])[0] == strings.Fields(sqliteFields[i])[0] {
				allowed[key] = true
				continue
			}
			diffs = append(diffs, "struct "+name+" field "+strconv.Itoa(i)+": db/gen "+sqliteFields[i]+", pggen "+pgFields[i])
		}
	}
	for name := range used {
		diffs = append(diffs, "struct "+name+": used by a ported query, missing in pggen")
	}
	for key, why := range allowedDifferences {
		if !allowed[key] {
			t.Errorf("allowedDifferences lists %s (%s), which no longer differs: remove it", key, why)
		}
	}
	slices.Sort(diffs)
	for _, d := range diffs {
		t.Error(d)
	}
	if len(pg.methods) == 0 {
		t.Fatal("no pggen methods parsed")
	}
	t.Logf("%d ported queries compared, %d shared structs, %d allowed differences", len(sqlite.methods), countShared(sqlite, pg), len(allowed))
}

func countShared(a, b goAPI) int {
	n := 0
	for name := range b.structs {
		if _, ok := a.structs[name]; ok {
			n++
		}
	}
	return n
}
