// Package driver is a stub of the ncruces database/sql driver for the tests.
package driver

import (
	"database/sql"
	"database/sql/driver"

	"github.com/ncruces/go-sqlite3"
)

type SQLite struct{}

func (d *SQLite) Open(name string) (driver.Conn, error)               { return nil, nil }
func (d *SQLite) OpenConnector(name string) (driver.Connector, error) { return nil, nil }

func Open(dataSourceName string, fn ...func(*sqlite3.Conn) error) (*sql.DB, error) { return nil, nil }
