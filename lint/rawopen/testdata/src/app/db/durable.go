package db

import "database/sql"

// The allowed file: opening here, and wrapping the open, is the point.
func openDurable(path string) (*sql.DB, error) {
	return sql.Open("sqlite3", "file:"+path+"?_pragma=synchronous(FULL)")
}

var opener = sql.Open
