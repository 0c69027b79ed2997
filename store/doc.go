// Package store is sessiondb's domain, written once for every engine: an
// AI agent's conversation state — sessions, messages and tool calls,
// search, lineage and compression, leases, titles, handoffs, activity,
// usage, rewind, flags, delete, export and import, prune, session lists —
// with the rules that keep it correct under many writers: validation
// before anything is written, counters kept in the write's own
// transaction, state machines (handoffs, compression), exactly-once
// idempotency keys, lineage walks.
//
// A Store comes from an engine: db.Open for a SQLite file (one machine,
// many processes), pg.Open for PostgreSQL (many machines). The engine
// owns connections, transactions, patience, the mapping of its errors to
// this package's sentinels, and search; the domain reaches it only through
// the interfaces of package store/driver. This package links neither
// engine (a test runs go list -deps to prove it), so a PostgreSQL user
// never links SQLite, nor a SQLite user pgx.
//
// Every engine runs the same conformance suite, package storetest.
//
// # Errors
//
// Every error wraps at most one sentinel (ErrNotFound, ErrExists,
// ErrLocked, ...; ErrDiskFull may come with ErrCommitUnknown), inside an
// *Error that says what was being done and on which session. Callers
// branch with errors.Is, never on text; no driver's wording reaches them.
package store
