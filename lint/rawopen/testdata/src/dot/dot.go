package dot

import . "database/sql"

func f() {
	Open("sqlite3", "x.db") // want `sql.Open skips`
}
