package a

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"os"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"
)

func calls(ctx context.Context, c sqldriver.Connector, d sqldriver.Driver) {
	sql.Open("sqlite3", "x.db")              // want `raw sqlite open outside db/durable.go: sql.Open skips the durability barriers`
	sql.OpenDB(c)                            // want `sql.OpenDB skips`
	sqlite3.Open("x.db")                     // want `sqlite3.Open skips`
	sqlite3.OpenContext(ctx, "x.db")         // want `sqlite3.OpenContext skips`
	sqlite3.OpenFlags("x.db", 0)             // want `sqlite3.OpenFlags skips`
	driver.Open("x.db")                      // want `driver.Open skips`
	(&driver.SQLite{}).Open("x.db")          // want `\(\*driver.SQLite\).Open skips`
	(&driver.SQLite{}).OpenConnector("x.db") // want `\(\*driver.SQLite\).OpenConnector skips`
	d.Open("x.db")                           // want `\(driver.Driver\).Open skips`
	c.Connect(ctx)                           // want `\(driver.Connector\).Connect skips`
}

func values() {
	open := sql.Open                            // want `sql.Open skips`
	use(sqlite3.Open)                           // want `sqlite3.Open skips`
	connector := (*driver.SQLite).OpenConnector // want `OpenConnector skips`
	_, _ = open, connector
}

var global = driver.Open // want `driver.Open skips`

func use(any) {}

// Negative cases: same names, other functions.
type store struct{}

func (store) Open(string) error { return nil }

func Open() {}

func fine() {
	os.Open("x")
	store{}.Open("x")
	Open()
	sql.Drivers()
	var c *sqlite3.Conn
	c.Close()
}
