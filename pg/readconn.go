package pg

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// readConn is a Read's pooled connection, noting whether the server has
// answered any of the read's statements yet. Until it has, an error that
// says the server is unreachable failed the read before any of it ran on
// the server (the connection broke in a restart since it was last used:
// the pool pings only connections idle for over a second) and before fn
// got any rows, so Read runs fn again on another connection.
type readConn struct {
	conn     *pgxpool.Conn
	answered bool
}

func (r *readConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := r.conn.Exec(ctx, sql, args...)
	r.answered = r.answered || err == nil
	return tag, err
}

func (r *readConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := r.conn.Query(ctx, sql, args...)
	if err != nil {
		return rows, err
	}
	return &answeredRows{Rows: rows, r: r}, nil
}

func (r *readConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return answeredRow{row: r.conn.QueryRow(ctx, sql, args...), r: r}
}

// answeredRows marks its read answered at its first row, or when it ends
// without error.
type answeredRows struct {
	pgx.Rows
	r *readConn
}

func (a *answeredRows) Next() bool {
	next := a.Rows.Next()
	a.r.answered = a.r.answered || next || a.Rows.Err() == nil
	return next
}

type answeredRow struct {
	row pgx.Row
	r   *readConn
}

func (a answeredRow) Scan(dest ...any) error {
	err := a.row.Scan(dest...)
	a.r.answered = a.r.answered || err == nil || err == pgx.ErrNoRows
	return err
}
