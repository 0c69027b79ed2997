// Package txonly defines an Analyzer that reports transactions begun
// outside the one write path.
//
// # Analyzer txonly
//
// txonly: no write transaction begins outside db/tx.go and pg/tx.go
//
// Every sessiondb write is BEGIN IMMEDIATE → callback → COMMIT in
// db/tx.go, which owns the patience budgets, the retry of lock errors only,
// and the exactly-once rules (no replay after a non-lock error, a panic or
// an unknown COMMIT); the PostgreSQL engine's transactions (SERIALIZABLE
// writes, READ COMMITTED append batches) begin and end in pg/tx.go alone,
// under the same rules. A transaction begun anywhere else silently has
// none of them.
//
// It reports, outside the allowed files (flag -txonly.allow, default
// "db/tx.go,pg/tx.go"):
//
//   - calls and method values of (*sql.DB).Begin, (*sql.DB).BeginTx,
//     (*sql.Conn).BeginTx, driver.Conn.Begin, driver.ConnBeginTx.BeginTx and
//     the ncruces Conn's Begin, BeginImmediate, BeginExclusive,
//     BeginConcurrent, Savepoint and driver.Savepoint, pgx's Conn.Begin
//     and BeginTx, pgxpool's Pool and Conn Begin and BeginTx, and
//     pgx.BeginFunc and BeginTxFunc — except a database/sql BeginTx whose
//     options literal says ReadOnly: true;
//   - Exec, Query, QueryRow and Prepare calls (with or without Context),
//     and pgx.Batch's Queue, whose constant SQL text starts with BEGIN,
//     SAVEPOINT, COMMIT, END, RELEASE or ROLLBACK.
//
// A deliberate exception carries an annotation with a reason:
//
//	//sessiondb:allow txonly -- plays another process holding the lock
package txonly
