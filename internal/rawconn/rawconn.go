// Package rawconn hands the benchmarks' raw-driver baseline its SQLite
// connections. They come from db/durable.go, the one place that opens
// connections, so the baseline pays for exactly the durability the store
// does (the same pragmas, the same synchronous=FULL) and no second copy of
// that configuration can drift. Package db fills Open when it is linked;
// the package is internal, so the library's API gains nothing.
package rawconn

import "database/sql"

// Open opens a one-connection pool on the SQLite database at path: the
// store writer's connection, or a read-pool connection when readOnly.
// Nil until package db is initialised.
var Open func(path string, readOnly bool) (*sql.DB, error)
