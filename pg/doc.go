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
// Open refuses what would make an acknowledged write unsafe. It refuses a
// trigger, rule or row-level-security policy on the store's tables that
// sessiondb did not create, or an altered column (ErrForeignSchema), and
// every write checks again for these objects after locking the tables.
// It refuses a schema owned by a role the caller does not trust
// (ErrUntrustedOwner, Options.TrustedOwners), a system schema, and
// connections that work in another schema (ErrInvalidConfig). Verify
// compares a store's whole catalog with sessiondb's own (catalog.golden).
// A statement canceled by the server's own statement_timeout or
// lock_timeout is a *ServerTimeoutError naming the setting. Open, like
// every write, keeps within its patience (Options.OpenPatience).
//
// Lease holders made by Store.NewHolder are provably dead once their
// store's session ends (an advisory lock the holder keeps; holder.go),
// on any machine; other holders wait for their TTL.
//
// The domain's types and errors are package store's (store.NewMessage,
// store.ErrNotFound); every verb is a method of [Store] here. The CLI
// speaks to this engine when --db is a postgres:// URL, and `sessiondb
// copy` moves a store between engines.
package pg
