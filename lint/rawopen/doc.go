// Package rawopen defines an Analyzer that reports SQLite connections
// opened outside the one durable opener.
//
// # Analyzer rawopen
//
// rawopen: no raw SQLite open outside db/durable.go
//
// sessiondb opens every connection — writer, readers, repair, probe — in
// db/durable.go, from one pragma table, so that none can miss a durability
// barrier (synchronous=FULL, fullfsync on macOS, busy_timeout first). A
// connection opened anywhere else can skip one, and a test of the opener
// alone cannot notice another call site. This analyzer can.
//
// It reports every reference — a call, a method value, a function passed
// as a value, through an import alias or a dot import — to:
//
//	database/sql.Open, database/sql.OpenDB
//	github.com/ncruces/go-sqlite3.Open, OpenContext, OpenFlags
//	github.com/ncruces/go-sqlite3/driver.Open
//	(*github.com/ncruces/go-sqlite3/driver.SQLite).Open, OpenConnector
//	(database/sql/driver.Driver).Open, (database/sql/driver.DriverContext).OpenConnector,
//	(database/sql/driver.Connector).Connect
//
// outside the allowed files (flag -rawopen.allow, comma-separated path
// suffixes, default "db/durable.go"). Functions are matched by identity
// from type information, never by name. Test files and generated files are
// checked too. A deliberate exception (a test playing "another process")
// carries an annotation with a reason, on its line or the line above:
//
//	//sessiondb:allow rawopen -- plays another process holding the lock
package rawopen
