package txonly

import (
	_ "embed"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/sessiondb/sessiondb/lint/internal/directive"
)

//go:embed doc.go
var doc string

// Analyzer reports transactions begun outside the allowed files.
var Analyzer = &analysis.Analyzer{
	Name: "txonly",
	Doc:  directive.AnalyzerDoc(doc, "txonly"),
	URL:  "https://pkg.go.dev/github.com/sessiondb/sessiondb/lint/txonly",
	Run:  run,
}

var allow = "db/tx.go,pg/tx.go"

func init() {
	Analyzer.Flags.StringVar(&allow, "allow", allow, "comma-separated path suffixes of the files allowed to begin transactions")
}

// beginners start a transaction, by types.Func.FullName.
var beginners = map[string]bool{
	"(*database/sql.DB).Begin":                              true,
	"(*database/sql.DB).BeginTx":                            true,
	"(*database/sql.Conn).BeginTx":                          true,
	"(database/sql/driver.Conn).Begin":                      true,
	"(database/sql/driver.ConnBeginTx).BeginTx":             true,
	"(*github.com/ncruces/go-sqlite3.Conn).Begin":           true,
	"(*github.com/ncruces/go-sqlite3.Conn).BeginImmediate":  true,
	"(*github.com/ncruces/go-sqlite3.Conn).BeginExclusive":  true,
	"(*github.com/ncruces/go-sqlite3.Conn).BeginConcurrent": true,
	"(*github.com/ncruces/go-sqlite3.Conn).Savepoint":       true,
	"github.com/ncruces/go-sqlite3/driver.Savepoint":        true,
	"(*github.com/jackc/pgx/v5.Conn).Begin":                 true,
	"(*github.com/jackc/pgx/v5.Conn).BeginTx":               true,
	"(*github.com/jackc/pgx/v5/pgxpool.Pool).Begin":         true,
	"(*github.com/jackc/pgx/v5/pgxpool.Pool).BeginTx":       true,
	"(*github.com/jackc/pgx/v5/pgxpool.Conn).Begin":         true,
	"(*github.com/jackc/pgx/v5/pgxpool.Conn).BeginTx":       true,
	"github.com/jackc/pgx/v5.BeginFunc":                     true,
	"github.com/jackc/pgx/v5.BeginTxFunc":                   true,
}

// sqlMethods take SQL text.
var sqlMethods = map[string]bool{
	"Exec": true, "ExecContext": true, "Query": true, "QueryContext": true,
	"QueryRow": true, "QueryRowContext": true, "Prepare": true, "PrepareContext": true,
	"Queue": true, // (*pgx.Batch).Queue: the statement goes with the batch
}

// txKeywords open or close a transaction when they lead a statement.
var txKeywords = map[string]bool{
	"BEGIN": true, "SAVEPOINT": true, "COMMIT": true, "END": true, "RELEASE": true, "ROLLBACK": true,
}

func run(pass *analysis.Pass) (any, error) {
	allowed := directive.SplitList(allow)
	where := strings.Join(allowed, ", ")
	report := directive.Reporter(pass, "txonly")
	for _, f := range pass.Files {
		if directive.FileIn(pass.Fset, f.Pos(), allowed) {
			continue
		}
		readOnly := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, _ := typeutil.Callee(pass.TypesInfo, call).(*types.Func)
			if fn == nil {
				return true
			}
			if beginners[fn.FullName()] && len(call.Args) == 2 && isReadOnlyOptions(pass, call.Args[1]) {
				readOnly[calleeIdent(call)] = true
			}
			if sqlMethods[fn.Name()] {
				for _, arg := range call.Args {
					if kw := leadingKeyword(pass, arg); txKeywords[kw] {
						report(arg.Pos(), "transaction control (%s) outside %s: it bypasses the write path's patience and exactly-once rules; write through %s", kw, where, where)
					}
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || readOnly[id] {
				return true
			}
			if fn, ok := pass.TypesInfo.Uses[id].(*types.Func); ok && beginners[fn.FullName()] {
				report(id.Pos(), "write transaction begun outside %s (%s): it bypasses the write path's patience and exactly-once rules; write through %s", where, fn.Name(), where)
			}
			return true
		})
	}
	return nil, nil
}

// calleeIdent is the identifier naming a call's function.
func calleeIdent(call *ast.CallExpr) *ast.Ident {
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return fun
	case *ast.SelectorExpr:
		return fun.Sel
	}
	return nil
}

// isReadOnlyOptions recognises &sql.TxOptions{ReadOnly: true} (or the
// driver's TxOptions) written as a literal.
func isReadOnlyOptions(pass *analysis.Pass, e ast.Expr) bool {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return false
	}
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "ReadOnly" {
			tv := pass.TypesInfo.Types[kv.Value]
			return tv.Value != nil && tv.Value.Kind() == constant.Bool && constant.BoolVal(tv.Value)
		}
	}
	return false
}

// leadingKeyword returns the first SQL keyword of a constant string
// argument, upper-cased, skipping white space and comments ("" otherwise).
func leadingKeyword(pass *analysis.Pass, e ast.Expr) string {
	tv := pass.TypesInfo.Types[e]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		return ""
	}
	s := constant.StringVal(tv.Value)
	for {
		s = strings.TrimLeft(s, " \t\r\n;")
		switch {
		case strings.HasPrefix(s, "--"):
			_, s, _ = strings.Cut(s, "\n")
		case strings.HasPrefix(s, "/*"):
			_, s, _ = strings.Cut(s, "*/")
		default:
			end := strings.IndexFunc(s, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
			})
			if end < 0 {
				end = len(s)
			}
			return strings.ToUpper(s[:end])
		}
	}
}
