package rawopen

import (
	_ "embed"
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/sessiondb/sessiondb/lint/internal/directive"
)

//go:embed doc.go
var doc string

// Analyzer reports raw SQLite opens outside the allowed files.
var Analyzer = &analysis.Analyzer{
	Name: "rawopen",
	Doc:  directive.AnalyzerDoc(doc, "rawopen"),
	URL:  "https://pkg.go.dev/github.com/sessiondb/sessiondb/lint/rawopen",
	Run:  run,
}

var allow = "db/durable.go"

func init() {
	Analyzer.Flags.StringVar(&allow, "allow", allow, "comma-separated path suffixes of the files allowed to open connections")
}

// openers are the functions that open a SQLite (or any database/sql)
// connection, by types.Func.FullName.
var openers = map[string]bool{
	"database/sql.Open":                                            true,
	"database/sql.OpenDB":                                          true,
	"github.com/ncruces/go-sqlite3.Open":                           true,
	"github.com/ncruces/go-sqlite3.OpenContext":                    true,
	"github.com/ncruces/go-sqlite3.OpenFlags":                      true,
	"github.com/ncruces/go-sqlite3/driver.Open":                    true,
	"(*github.com/ncruces/go-sqlite3/driver.SQLite).Open":          true,
	"(*github.com/ncruces/go-sqlite3/driver.SQLite).OpenConnector": true,
	"(database/sql/driver.Driver).Open":                            true,
	"(database/sql/driver.DriverContext).OpenConnector":            true,
	"(database/sql/driver.Connector).Connect":                      true,
}

func run(pass *analysis.Pass) (any, error) {
	allowed := directive.SplitList(allow)
	report := directive.Reporter(pass, "rawopen")
	for _, f := range pass.Files {
		if directive.FileIn(pass.Fset, f.Pos(), allowed) {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			fn, ok := pass.TypesInfo.Uses[id].(*types.Func)
			if !ok || !openers[fn.FullName()] {
				return true
			}
			report(id.Pos(), "raw sqlite open outside %s: %s skips the durability barriers (synchronous=FULL, fullfsync, busy_timeout); open connections only through the durable opener",
				strings.Join(allowed, ", "), shortName(fn))
			return true
		})
	}
	return nil, nil
}

// shortName renders sql.Open or (*driver.SQLite).Open for diagnostics.
func shortName(fn *types.Func) string {
	sig := fn.Signature()
	if recv := sig.Recv(); recv != nil {
		return "(" + types.TypeString(recv.Type(), func(p *types.Package) string { return p.Name() }) + ")." + fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}
