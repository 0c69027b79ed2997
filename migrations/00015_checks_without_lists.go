package migrations

// Version 15: the CHECK constraints that listed three or more values say
// the same with comparisons.
//
// SQLite codes `x IN ('a', 'b', 'c')` in a CHECK constraint as a lookup
// in a temporary b-tree it builds on every row it checks: opening that
// b-tree, filling it and closing it was a third of inserting a message
// (messages.role, messages.state; sessions.handoff_state and
// sessions.parent_kind when a session is created or changes them).
// `x = 'a' OR x = 'b' OR x = 'c'` accepts and refuses exactly the same
// values (NULL included: neither form is false for it) and costs a few
// comparisons (docs/PERFORMANCE.md).
//
// SQLite cannot change a column's CHECK constraint with ALTER TABLE, and
// rebuilding messages would rewrite every row. The constraint is not
// stored in any row, so this migration follows SQLite's procedure for
// such changes ("Making Other Kinds Of Table Schema Changes", the ALTER
// TABLE page): in one transaction, rewrite the table's CREATE statement
// in sqlite_schema under writable_schema, then set schema_version one
// past what it was so that every connection reads the schema again. A Go
// migration because the new schema_version is computed from the old.
//
// A constraint not written exactly as the earlier migrations wrote it is
// left as it is: it is not one these migrations produced, and Verify
// reports the table's statement as it did before.

import (
	"context"
	"database/sql"
)

// listChecks is each table's constraints as migrations 1 and 3 wrote
// them, and as version 15 writes them.
var listChecks = []checkEdit{
	{"messages",
		"CHECK (role IN ('system', 'user', 'assistant', 'tool'))",
		"CHECK (role = 'system' OR role = 'user' OR role = 'assistant' OR role = 'tool')"},
	{"messages",
		"CHECK (state IN ('active', 'compacted', 'rewound'))",
		"CHECK (state = 'active' OR state = 'compacted' OR state = 'rewound')"},
	{"sessions",
		"CHECK (handoff_state IN ('pending', 'running', 'completed', 'failed'))",
		"CHECK (handoff_state = 'pending' OR handoff_state = 'running' OR handoff_state = 'completed' OR handoff_state = 'failed')"},
	{"sessions",
		"CHECK (parent_kind IN ('compression', 'branch', 'delegate', 'reset', 'tool'))",
		"CHECK (parent_kind = 'compression' OR parent_kind = 'branch' OR parent_kind = 'delegate' OR parent_kind = 'reset' OR parent_kind = 'tool')"},
}

// rewriteChecks writes the comparisons in place of the lists (back: the
// lists in place of the comparisons).
func rewriteChecks(ctx context.Context, tx *sql.Tx, back bool) error {
	return rewriteTableChecks(ctx, tx, listChecks, back)
}
