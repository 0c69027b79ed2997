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
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"
)

// Go is the migrations written in Go, for goose.WithGoMigrations.
func Go() []*goose.Migration {
	return []*goose.Migration{
		goose.NewGoMigration(15,
			&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return rewriteChecks(ctx, tx, false) }},
			&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return rewriteChecks(ctx, tx, true) }}),
	}
}

// listChecks is each table's constraints as migrations 1 and 3 wrote
// them, and as version 15 writes them.
var listChecks = []struct{ table, list, comparisons string }{
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
// lists in place of the comparisons). Hand-written SQL: sqlc cannot see
// sqlite_schema, and the PRAGMAs are SQLite's procedure itself.
func rewriteChecks(ctx context.Context, tx *sql.Tx, back bool) (err error) {
	var version int64
	if err := tx.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema_version: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA writable_schema = ON"); err != nil {
		return err
	}
	defer func() {
		if _, offErr := tx.ExecContext(ctx, "PRAGMA writable_schema = OFF"); err == nil && offErr != nil {
			err = offErr
		}
	}()
	changed := false
	for _, table := range []string{"messages", "sessions"} {
		var stmt string
		if err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", table).Scan(&stmt); err != nil {
			return fmt.Errorf("read the %s table's statement: %w", table, err)
		}
		next := stmt
		for _, c := range listChecks {
			from, to := c.list, c.comparisons
			if back {
				from, to = to, from
			}
			if c.table != table || strings.Count(next, from) != 1 {
				continue
			}
			next = strings.Replace(next, from, to, 1)
		}
		if next == stmt {
			continue
		}
		if _, err := tx.ExecContext(ctx, "UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?", next, table); err != nil {
			return fmt.Errorf("rewrite the %s table's checks: %w", table, err)
		}
		changed = true
	}
	if !changed {
		return nil
	}
	// A PRAGMA takes no bound parameter; version is an integer read above.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA schema_version = %d", version+1)); err != nil {
		return fmt.Errorf("set schema_version: %w", err)
	}
	return nil
}
