package migrations

// checks.go changes a CHECK constraint in place, by SQLite's procedure for
// schema changes ALTER TABLE cannot make ("Making Other Kinds Of Table
// Schema Changes", the ALTER TABLE page): in one transaction, rewrite the
// table's CREATE statement in sqlite_schema under writable_schema, then
// set schema_version one past what it was so that every connection reads
// the schema again. No row is rewritten; a change may only accept more
// (or, back, refuse what no row holds), never make a stored row invalid.

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/pressly/goose/v3"
)

// Go is the migrations written in Go, for goose.WithGoMigrations.
func Go() []*goose.Migration {
	return []*goose.Migration{
		goose.NewGoMigration(15,
			&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return rewriteChecks(ctx, tx, false) }},
			&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return rewriteChecks(ctx, tx, true) }}),
		goose.NewGoMigration(17,
			&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return rewriteTableChecks(ctx, tx, noteRole, false) }},
			&goose.GoFunc{RunTx: noteRoleDown}),
	}
}

// checkEdit is one constraint of a table as it was and as it becomes.
type checkEdit struct{ table, was, becomes string }

// rewriteTableChecks makes the edits (back: undoes them). A constraint not
// written exactly as the edit's earlier form is left as it is: it is not
// one these migrations produced, and Verify reports the table's statement
// as it did before. Hand-written SQL: sqlc cannot see sqlite_schema, and
// the PRAGMAs are SQLite's procedure itself.
func rewriteTableChecks(ctx context.Context, tx *sql.Tx, edits []checkEdit, back bool) (err error) {
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
	var tables []string
	for _, e := range edits {
		if !slices.Contains(tables, e.table) {
			tables = append(tables, e.table)
		}
	}
	for _, table := range tables {
		var stmt string
		if err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", table).Scan(&stmt); err != nil {
			return fmt.Errorf("read the %s table's statement: %w", table, err)
		}
		next := stmt
		for _, c := range edits {
			from, to := c.was, c.becomes
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
