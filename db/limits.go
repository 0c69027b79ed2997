package db

// maxMessageBytes is the largest message the SQLite engine keeps
// (Store.MaxMessageBytes): 64 MiB of text columns together, enough for a
// long tool output or an image of ~45 MB as a base64 data URL.
//
// The bound is the driver's memory, not SQLite's: the ncruces build runs
// SQLite in WebAssembly with a heap of at most 256 MiB per connection, and
// on SQLITE_NOMEM the driver panics (go-sqlite3 conn.go errorFor) inside
// database/sql, which then never releases the connection (Stmt.ExecContext
// does not defer its release), so the writer's Close waited forever. The
// heap has to hold an appended row twice (the bound argument and the
// record) and, when the row is indexed, the row and the full-text indexes'
// pending terms. Measured on this build (docs/RELIABILITY.md): 64 MiB of
// words, of base64 and of distinct tokens append, index, list and search
// in a fresh process; a 100 MB message of words appended and then ran out
// of memory in the indexer.
//
// The indexer skips a row larger than this (ftsqueue.go), so a file that
// already holds one (written by an older build or another program) opens,
// lists, and searches; that row alone is not in the full-text index.
// Raising the bound makes such rows indexable again only through a rebuild.
const maxMessageBytes = 64 << 20

// MaxMessageBytes is the SQLite engine's limit (see maxMessageBytes).
func (sqliteDriver) MaxMessageBytes() int64 { return maxMessageBytes }

// writerMaxMemory is the most memory the writer's connection may take
// (the driver's default is 256 MiB).
const writerMaxMemory = 1 << 30
