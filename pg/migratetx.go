package pg

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"

	"github.com/jackc/pgx/v5"
)

// goose migrates through database/sql, beginning a transaction of its own
// for each migration. Here it runs inside the transaction that holds the
// migration lock (migrate.go): txConnector hands database/sql one
// connection that is that transaction, and a transaction goose begins on
// it is a savepoint of it (migrationSavepoint, in tx.go). So the lock and
// every migration share one server connection and end together, behind a
// transaction-pooling proxy too.

// txConnector is a database/sql connector whose one connection is tx.
type txConnector struct{ tx pgx.Tx }

func (c txConnector) Connect(context.Context) (driver.Conn, error) { return &txConn{tx: c.tx}, nil }
func (c txConnector) Driver() driver.Driver                        { return txDriver{} }

// txDriver exists because a connector must name a driver; sql.Open never
// reaches it.
type txDriver struct{}

func (txDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("pg: the migration transaction opens through its connector only")
}

// txConn is the migration transaction as a database/sql connection.
type txConn struct {
	tx pgx.Tx
	sp pgx.Tx // the savepoint goose's current transaction is, or nil
}

var (
	_ driver.ExecerContext  = (*txConn)(nil)
	_ driver.QueryerContext = (*txConn)(nil)
	_ driver.ConnBeginTx    = (*txConn)(nil)
)

func (c *txConn) on() pgx.Tx {
	if c.sp != nil {
		return c.sp
	}
	return c.tx
}

func (c *txConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("pg: the migration transaction runs statements unprepared")
}

func (c *txConn) Close() error { return nil } // the transaction is migrate's to end

func (c *txConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *txConn) BeginTx(ctx context.Context, _ driver.TxOptions) (driver.Tx, error) {
	if c.sp != nil {
		return nil, errors.New("pg: goose began a transaction inside another")
	}
	sp, err := migrationSavepoint(ctx, c.tx)
	if err != nil {
		return nil, err
	}
	c.sp = sp
	return txSavepoint{c}, nil
}

func (c *txConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	tag, err := c.on().Exec(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

func (c *txConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.on().Query(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	cols := make([]string, 0, len(rows.FieldDescriptions()))
	for _, f := range rows.FieldDescriptions() {
		cols = append(cols, f.Name)
	}
	return &txRows{rows: rows, cols: cols}, nil
}

func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

// txSavepoint is a transaction goose began: a savepoint of the migration
// transaction.
type txSavepoint struct{ c *txConn }

func (s txSavepoint) Commit() error {
	sp := s.c.sp
	s.c.sp = nil
	return sp.Commit(context.Background())
}

func (s txSavepoint) Rollback() error {
	sp := s.c.sp
	s.c.sp = nil
	return sp.Rollback(context.Background())
}

type txRows struct {
	rows pgx.Rows
	cols []string
}

func (r *txRows) Columns() []string { return r.cols }

func (r *txRows) Close() error {
	r.rows.Close()
	return r.rows.Err()
}

func (r *txRows) Next(dest []driver.Value) error {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	vals, err := r.rows.Values()
	if err != nil {
		return err
	}
	for i, v := range vals {
		switch n := v.(type) { // database/sql's value kinds
		case int16:
			v = int64(n)
		case int32:
			v = int64(n)
		case float32:
			v = float64(n)
		}
		dest[i] = v
	}
	return nil
}
