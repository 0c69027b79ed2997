package db

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/sessiondb/sessiondb/db/gen"
)

// A store's tables are not STRICT (they predate SQLite 3.37, and a table
// rebuild of messages is not worth it), so SQLite keeps whatever another
// program writes into a column: the text 'garbage' in an INTEGER
// timestamp, a REAL, a BLOB, or JSON that does not parse where sessiondb
// parses JSON. sessiondb never writes such a value, and its readers
// cannot take one: every listing, search and export that meets the row
// would fail. Verify names each such column (badCells), a read that meets
// one gets ErrCorrupt saying so (mapDriverError; store's badStoredJSON),
// and Repair rewrites the cells (repairBadCells), leaving every other
// cell as it was.

// cellCheck is one column of one of sessiondb's tables and what its
// values must be.
type cellCheck struct {
	table, column string
	notNull       bool
	json          bool // JSON text sessiondb parses; otherwise an INTEGER column
}

// parsedJSON are the JSON columns sessiondb parses when it reads them
// (others, such as origin_json, are kept as given).
var parsedJSON = map[string]bool{
	"sessions.model_config_json": true,
	"messages.tool_calls_json":   true,
	"messages.parts_json":        true,
	"messages.metadata_json":     true,
}

// bad is the SQL condition that a cell of c breaks the rule.
func (c cellCheck) bad() string {
	col := quoteIdent(c.column)
	if c.json {
		return fmt.Sprintf(`(%[1]s IS NOT NULL AND (typeof(%[1]s) <> 'text' OR NOT json_valid(%[1]s)))`, col)
	}
	return fmt.Sprintf(`typeof(%s) NOT IN ('integer', 'null')`, col)
}

// cellChecks lists the checked columns of sessiondb's own tables in the
// file, by table (its schema as found, so a file of any version is read
// as it is).
func cellChecks(ctx context.Context, q gen.DBTX) ([]cellCheck, error) {
	var tables []string
	for key, o := range expectedSchema() {
		if strings.HasPrefix(key, "table ") {
			tables = append(tables, o.name)
		}
	}
	slices.Sort(tables)
	var checks []cellCheck
	for _, t := range tables {
		// Hand-written: the columns are the file's, read from its schema.
		rows, err := q.QueryContext(ctx, `SELECT name, upper(type), "notnull" FROM pragma_table_info(?)`, t)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			c := cellCheck{table: t}
			var typ string
			if err := rows.Scan(&c.column, &typ, &c.notNull); err != nil {
				rows.Close()
				return nil, err
			}
			c.json = parsedJSON[t+"."+c.column]
			if c.json || typ == "INTEGER" {
				checks = append(checks, c)
			}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	return checks, nil
}

// badCells returns one finding per checked column holding values it must
// not: how many rows, the first one's rowid, and what was found. One scan
// of each table, and one more of a table with findings.
func badCells(ctx context.Context, q gen.DBTX) ([]string, error) {
	checks, err := cellChecks(ctx, q)
	if err != nil {
		return nil, err
	}
	var findings []string
	for _, these := range byTable(checks) {
		t := these[0].table
		exprs := make([]string, len(these))
		counts := make([]int64, len(these))
		dest := make([]any, len(these))
		for i, c := range these {
			exprs[i] = "COALESCE(SUM(" + c.bad() + "), 0)"
			dest[i] = &counts[i]
		}
		// Hand-written: one query over every checked column of a table,
		// built from the file's own schema.
		if err := q.QueryRowContext(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+quoteIdent(t)).Scan(dest...); err != nil {
			return nil, err
		}
		for i, c := range these {
			if counts[i] == 0 {
				continue
			}
			var first int64
			var types string
			if err := q.QueryRowContext(ctx, fmt.Sprintf(
				`SELECT min(rowid), group_concat(DISTINCT typeof(%s)) FROM %s WHERE %s`,
				quoteIdent(c.column), quoteIdent(t), c.bad())).Scan(&first, &types); err != nil {
				return nil, err
			}
			what := "holds " + strings.ReplaceAll(types, ",", ", ") + " where an integer belongs"
			if c.json {
				what = "holds JSON that does not parse"
			}
			findings = append(findings, fmt.Sprintf("bad cells: %s.%s %s, in %d row(s) (first rowid %d): "+
				"another program wrote into the store; `sessiondb repair` rewrites them", t, c.column, what, counts[i], first))
		}
	}
	return findings, nil
}

// byTable groups checks, which come ordered by table.
func byTable(checks []cellCheck) [][]cellCheck {
	var groups [][]cellCheck
	for i, c := range checks {
		if i == 0 || checks[i-1].table != c.table {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], c)
	}
	return groups
}

// repairBadCells rewrites every cell badCells finds: NULL where the
// column allows it (broken JSON always: what it held is in the repair's
// backup), else the integer SQLite's CAST gives (a REAL keeps its integer
// part; text that is no number becomes 0, which for a timestamp reads as
// 1970-01-01). No other cell changes.
func repairBadCells(ctx context.Context, d *sql.DB) error {
	checks, err := cellChecks(ctx, d)
	if err != nil {
		return err
	}
	// No transaction: a strategy works on a scratch copy, which replaces
	// the file only when it verifies (Repair), so a statement that fails
	// leaves nothing half-done that anyone reads.
	for _, c := range checks {
		col := quoteIdent(c.column)
		value := "NULL"
		if c.notNull && !c.json {
			value = "CAST(" + col + " AS INTEGER)"
		}
		// Hand-written: repair works on the file's own schema.
		if _, err := d.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET %s = %s WHERE %s`, quoteIdent(c.table), col, value, c.bad())); err != nil {
			return fmt.Errorf("rewrite %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}
