package alias

import (
	stdsql "database/sql"

	lite "github.com/ncruces/go-sqlite3"
)

func f() {
	stdsql.Open("sqlite3", "x.db") // want `sql.Open skips`
	lite.Open("x.db")              // want `sqlite3.Open skips`
}
