package a

import (
	"context"
	"database/sql"

	"github.com/ncruces/go-sqlite3"
)

const begin = "BEGIN IMMEDIATE"

func methods(ctx context.Context, db *sql.DB, conn *sql.Conn, lite *sqlite3.Conn) {
	db.Begin()                                         // want `write transaction begun outside db/tx.go, pg/tx.go \(Begin\)`
	db.BeginTx(ctx, nil)                               // want `write transaction begun outside db/tx.go, pg/tx.go \(BeginTx\)`
	conn.BeginTx(ctx, &sql.TxOptions{})                // want `\(BeginTx\)`
	conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: false}) // want `\(BeginTx\)`
	lite.Begin()                                       // want `\(Begin\)`
	lite.BeginImmediate()                              // want `\(BeginImmediate\)`
	lite.BeginExclusive()                              // want `\(BeginExclusive\)`
	lite.BeginConcurrent()                             // want `\(BeginConcurrent\)`
	lite.Savepoint()                                   // want `\(Savepoint\)`
	start := db.Begin                                  // want `\(Begin\)`
	_ = start
}

func text(ctx context.Context, db *sql.DB, conn *sql.Conn, lite *sqlite3.Conn) {
	db.Exec("BEGIN")                                         // want `transaction control \(BEGIN\) outside db/tx.go`
	conn.ExecContext(ctx, begin)                             // want `transaction control \(BEGIN\)`
	conn.ExecContext(ctx, "  -- why\n /* c */ savepoint s1") // want `\(SAVEPOINT\)`
	db.ExecContext(ctx, "COMMIT")                            // want `\(COMMIT\)`
	db.ExecContext(ctx, "end")                               // want `\(END\)`
	db.ExecContext(ctx, "RELEASE s1")                        // want `\(RELEASE\)`
	db.QueryContext(ctx, "ROLLBACK TO s1")                   // want `\(ROLLBACK\)`
	lite.Exec("begin exclusive")                             // want `\(BEGIN\)`
	db.Exec("BEG" + "IN")                                    // want `\(BEGIN\)`
}

func fine(ctx context.Context, db *sql.DB, conn *sql.Conn, q string) {
	conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a read transaction
	db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelDefault, ReadOnly: true})
	db.Exec("SELECT 'BEGIN'")
	db.Exec("INSERT INTO t VALUES ('COMMIT')")
	db.Exec(q)           // not constant: nothing to tell
	db.Exec("BEGINNING") // not the keyword
}
