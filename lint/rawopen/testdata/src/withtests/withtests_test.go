package withtests

import (
	"database/sql"
	"testing"
)

func TestBare(t *testing.T) {
	sql.Open("sqlite3", "x.db") // want `sql.Open skips`
}

func TestEscaped(t *testing.T) {
	//sessiondb:allow rawopen -- plays another process holding the write lock
	sql.Open("sqlite3", "x.db")
	sql.Open("sqlite3", "y.db") //sessiondb:allow rawopen -- same, trailing form
}

func TestEscapeForAnotherAnalyzer(t *testing.T) {
	//sessiondb:allow txonly -- names the wrong analyzer
	sql.Open("sqlite3", "x.db") // want `sql.Open skips`
}

func TestEscapeWithoutReason(t *testing.T) {
	//sessiondb:allow rawopen // want `sessiondb:allow rawopen needs a reason`
	sql.Open("sqlite3", "x.db") // want `sql.Open skips`
}
