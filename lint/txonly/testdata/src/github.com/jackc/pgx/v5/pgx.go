// Package pgx is a stub of pgx's API for the tests.
package pgx

import "context"

type TxOptions struct{ IsoLevel string }
type Tx interface{ Commit(context.Context) error }
type Conn struct{}

func (c *Conn) Begin(ctx context.Context) (Tx, error)                { return nil, nil }
func (c *Conn) BeginTx(ctx context.Context, o TxOptions) (Tx, error) { return nil, nil }
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) error {
	return nil
}

type Batch struct{}

func (b *Batch) Queue(sql string, args ...any) {}

func BeginFunc(ctx context.Context, c *Conn, fn func(Tx) error) error                { return nil }
func BeginTxFunc(ctx context.Context, c *Conn, o TxOptions, fn func(Tx) error) error { return nil }
