// Package pg is sessiondb's PostgreSQL engine, in its own module so that
// SQLite users never inherit pgx (and PostgreSQL users never link SQLite:
// deps_test.go checks).
//
// Open (a connection string) or OpenPool (an existing *pgxpool.Pool)
// returns a Store: the domain of package store over this engine, in one
// schema of the database, created and migrated at open. Plain appends of
// one process share READ COMMITTED transactions and their WAL flush
// (group commit, their sessions' rows locked first); every other write is
// a SERIALIZABLE transaction. Both are bounded by the call's patience
// (lock_timeout, statement_timeout, the pool's acquire); serialization
// failures and deadlocks are rerun; a COMMIT without an answer is
// ErrCommitUnknown. docs/ARCHITECTURE.md says which rule each isolation
// protects. Search uses a tsvector index for words and pg_trgm for
// substrings (diacritics folded by unaccent), with the SQLite engine's
// sanitiser and snippet rules.
//
// Lease holders made by Store.NewHolder are provably dead once their
// store's session ends (an advisory lock the holder keeps; holder.go),
// on any machine; other holders wait for their TTL.
//
// Not yet here: the CLI, and copying a store between engines.
package pg
