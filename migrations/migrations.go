// Package migrations holds sessiondb's goose migrations: SQL files,
// embedded in FS, and the ones written in Go (Go), needed only where
// SQLite's own procedure reads a value from the file (versions 15 and 17).
//
// They are applied in order by db.Open under a cross-process lock
// (goose alone does not serialise two processes migrating one SQLite file).
// Never edit a migration that has shipped: add a new one.
package migrations

import "embed"

// FS holds the SQL migrations, named NNNNN_description.sql; Go holds the
// rest, each in a file named NNNNN_description.go.
//
//go:embed *.sql
var FS embed.FS
