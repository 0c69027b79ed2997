package pg

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The allowed file: the PostgreSQL engine's transactions.
func write(ctx context.Context, p *pgxpool.Pool, c *pgx.Conn) error {
	if _, err := p.BeginTx(ctx, pgx.TxOptions{}); err != nil {
		return err
	}
	var b pgx.Batch
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	return c.Exec(ctx, "COMMIT")
}
