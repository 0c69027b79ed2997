package migrations

// Version 17: a message may have the role 'note' — text kept with a
// conversation (an agent's note through `sessiondb mcp --allow-notes`)
// that no converter and no model view ever gives a model as anyone's
// words (issue 38). Only the messages table's CHECK on role changes,
// in place (checks.go): every stored row already satisfies the new one.

import (
	"context"
	"database/sql"
	"fmt"
)

// noteRole adds 'note' to the roles version 15 wrote as comparisons.
var noteRole = []checkEdit{{"messages",
	"CHECK (role = 'system' OR role = 'user' OR role = 'assistant' OR role = 'tool')",
	"CHECK (role = 'system' OR role = 'user' OR role = 'assistant' OR role = 'tool' OR role = 'note')"}}

// noteRoleDown takes 'note' out again, refusing while a note is stored:
// the constraint must hold for every row, and a note is not to be
// dropped or turned into another role's words.
func noteRoleDown(ctx context.Context, tx *sql.Tx) error {
	var notes int64
	// Hand-written SQL: a migration's own check, not a query the store makes.
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM messages WHERE role = 'note'").Scan(&notes); err != nil {
		return fmt.Errorf("count notes: %w", err)
	}
	if notes > 0 {
		return fmt.Errorf("%d messages are notes, which version 16 cannot hold: delete them first", notes)
	}
	return rewriteTableChecks(ctx, tx, noteRole, true)
}
