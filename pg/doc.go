// Package pg is sessiondb's PostgreSQL engine, in its own module so that
// SQLite users never inherit pgx.
//
// STAGE 1 (unstable): this package holds the schema, the generated
// queries (internal/pggen) and the open-side plumbing (pool
// configuration, locale check, migrations under an advisory lock). The
// store itself, behind the neutral driver interface, comes next; until
// then nothing here is a supported API.
package pg
