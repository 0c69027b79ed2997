package db

import (
	"context"
	"database/sql"
)

func Save(ctx context.Context, c *sql.Conn) error { return write(ctx, c) }

func shortcut(ctx context.Context, d *sql.DB) {
	d.BeginTx(ctx, nil)         // want `write transaction begun outside db/tx.go`
	d.ExecContext(ctx, "BEGIN") // want `transaction control \(BEGIN\) outside db/tx.go`
}
