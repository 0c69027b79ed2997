package pg

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func Save(ctx context.Context, p *pgxpool.Pool, c *pgx.Conn) error { return write(ctx, p, c) }

func shortcut(ctx context.Context, p *pgxpool.Pool, pc *pgxpool.Conn, c *pgx.Conn) {
	p.Begin(ctx)                                  // want `write transaction begun outside db/tx.go, pg/tx.go \(Begin\)`
	p.BeginTx(ctx, pgx.TxOptions{})               // want `\(BeginTx\)`
	pc.BeginTx(ctx, pgx.TxOptions{})              // want `\(BeginTx\)`
	c.Begin(ctx)                                  // want `\(Begin\)`
	pgx.BeginTxFunc(ctx, c, pgx.TxOptions{}, nil) // want `\(BeginTxFunc\)`
	c.Exec(ctx, "SAVEPOINT x")                    // want `transaction control \(SAVEPOINT\) outside db/tx.go, pg/tx.go`
	var b pgx.Batch
	b.Queue("BEGIN") // want `transaction control \(BEGIN\)`
}
