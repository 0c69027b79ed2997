package db

import "database/sql"

func Open(path string) (*sql.DB, error) {
	return openDurable(path) // the wrapper is fine anywhere
}

func sneaky(path string) (*sql.DB, error) {
	return sql.Open("sqlite3", path) // want `raw sqlite open outside db/durable.go`
}
