package db

import (
	"context"
	"database/sql"
)

// The allowed file: the write path itself.
func write(ctx context.Context, c *sql.Conn) error {
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	_, err := c.ExecContext(ctx, "COMMIT")
	return err
}

func viaTx(ctx context.Context, d *sql.DB) (*sql.Tx, error) { return d.BeginTx(ctx, nil) }
