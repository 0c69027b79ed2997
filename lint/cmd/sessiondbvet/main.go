// Command sessiondbvet is sessiondb's vet tool: it runs the database
// discipline analyzers under `go vet`:
//
//   - rawopen: no SQLite connection opened outside db/durable.go;
//   - txonly: no write transaction begun outside db/tx.go;
//   - checklocks (gVisor): a field annotated `// +checklocks:mu` is only
//     touched with mu held — the writer connection first of all.
//
// Build and run it:
//
//	go build -o sessiondbvet ./lint/cmd/sessiondbvet   # from lint/: go build ./cmd/sessiondbvet
//	go vet -vettool=$PWD/sessiondbvet ./...
//
// A vettool replaces vet's standard checks, so run plain `go vet ./...` as
// well. Flags: -rawopen.allow and -txonly.allow name other allowed files
// (comma-separated path suffixes).
package main

import (
	"golang.org/x/tools/go/analysis/unitchecker"
	"gvisor.dev/gvisor/tools/checklocks"

	"github.com/sessiondb/sessiondb/lint/rawopen"
	"github.com/sessiondb/sessiondb/lint/txonly"
)

func main() {
	unitchecker.Main(rawopen.Analyzer, txonly.Analyzer, checklocks.Analyzer)
}
