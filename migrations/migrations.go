// Package migrations embeds sessiondb's goose SQL migrations.
//
// The files are applied in order by db.Open under a cross-process lock
// (goose alone does not serialise two processes migrating one SQLite file).
// Never edit a migration that has shipped: add a new one.
package migrations

import "embed"

// FS holds every migration, named NNNNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
