// Package pgxpool is a stub of pgxpool's API for the tests.
package pgxpool

import (
	"context"

	"github.com/jackc/pgx/v5"
)

type Pool struct{}
type Conn struct{}

func (p *Pool) Begin(ctx context.Context) (pgx.Tx, error)                    { return nil, nil }
func (p *Pool) BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error) { return nil, nil }
func (c *Conn) Begin(ctx context.Context) (pgx.Tx, error)                    { return nil, nil }
func (c *Conn) BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error) { return nil, nil }
