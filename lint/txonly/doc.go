// Package txonly defines an Analyzer that reports transactions begun
// outside the one write path.
//
// # Analyzer txonly
//
// txonly: no write transaction begins outside db/tx.go
//
// Every sessiondb write is BEGIN IMMEDIATE → callback → COMMIT in
// db/tx.go, which owns the patience budgets, the retry of lock errors only,
// and the exactly-once rules (no replay after a non-lock error, a panic or
// an unknown COMMIT). A transaction begun anywhere else silently has none
// of them.
//
// It reports, outside the allowed files (flag -txonly.allow, default
// "db/tx.go"):
//
//   - calls and method values of (*sql.DB).Begin, (*sql.DB).BeginTx,
//     (*sql.Conn).BeginTx, driver.Conn.Begin, driver.ConnBeginTx.BeginTx and
//     the ncruces Conn's Begin, BeginImmediate, BeginExclusive,
//     BeginConcurrent, Savepoint and driver.Savepoint — except a BeginTx
//     whose options literal says ReadOnly: true;
//   - Exec, Query, QueryRow and Prepare calls (with or without Context)
//     whose constant SQL text starts with BEGIN, SAVEPOINT, COMMIT, END,
//     RELEASE or ROLLBACK.
//
// A deliberate exception carries an annotation with a reason:
//
//	//sessiondb:allow txonly -- plays another process holding the lock
package txonly
