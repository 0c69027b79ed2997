package pg

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiondb/sessiondb/pg/internal/pggen"
)

// recorded is the statement a generated query sends: its text and
// arguments, read by running it on a connection that only records them.
// The pipeline sends it in its own batch.
func recorded(query func(db pggen.DBTX) error) (string, []any) {
	var r recorder
	_ = query(&r) // always errRecorded
	return r.sql, r.args
}

var errRecorded = errors.New("pg: recorded, not sent")

// recorder is a pggen.DBTX that keeps the statement it is given.
type recorder struct {
	sql  string
	args []any
}

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.sql, r.args = sql, args
	return pgconn.CommandTag{}, errRecorded
}

func (r *recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.sql, r.args = sql, args
	return nil, errRecorded
}

func (r *recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.sql, r.args = sql, args
	return recordedRow{}
}

type recordedRow struct{}

func (recordedRow) Scan(...any) error { return errRecorded }
