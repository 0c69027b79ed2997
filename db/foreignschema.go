package db

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/schema"
)

// A schema object sessiondb did not create can break its promises without
// touching a row it wrote: a trigger on messages that deletes each row as
// it is inserted undoes an acknowledged append (and a retry with the same
// key then gets a new id), a dropped unique index ends exactly-once, and
// any other object is not sessiondb's to vouch for. sessiondb's schema is exactly what its migrations produce, which
// schema/schema.sql records (CI regenerates it and fails on a diff).
// Verify reports every object that differs from it; Open and every write
// refuse to run through a foreign trigger on sessiondb's own tables (one
// on a table of the user's own does not fire on our writes).

// expectedSchema is schema.sql's objects by type and name.
var expectedSchema = sync.OnceValue(func() map[string]schemaObject {
	objects := map[string]schemaObject{}
	for _, stmt := range strings.Split(schema.SQL, ";\n\n") {
		// Drop the header's comment lines before the statement.
		for strings.HasPrefix(stmt, "--") {
			_, stmt, _ = strings.Cut(stmt, "\n")
		}
		stmt = strings.TrimSpace(stmt)
		if m := createRE.FindStringSubmatch(stmt); m != nil {
			o := schemaObject{kind: strings.ToLower(m[1]), name: m[2], sql: strings.TrimSuffix(stmt, ";")}
			objects[o.kind+" "+o.name] = o
		}
	}
	return objects
})

// createRE takes the type and name from a CREATE statement.
var createRE = regexp.MustCompile(`^CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(TABLE|INDEX|TRIGGER|VIEW)\s+(\w+)`)

// ourTable reports a table sessiondb creates, or a shadow table of one of
// its full-text indexes (messages_fts_data, …).
func ourTable(name string) bool {
	want := expectedSchema()
	if _, ok := want["table "+name]; ok {
		return true
	}
	for _, o := range want {
		if o.kind == "table" && strings.HasPrefix(name, o.name+"_") && strings.Contains(o.sql, "VIRTUAL TABLE") {
			return true
		}
	}
	return false
}

// foreignTriggers describes each trigger on sessiondb's tables that its
// migrations did not create exactly so. One read of sqlite_schema.
func foreignTriggers(ctx context.Context, q gen.DBTX) ([]string, error) {
	// Hand-written: sqlc cannot see sqlite_schema.
	rows, err := q.QueryContext(ctx, "SELECT name, tbl_name, sql FROM sqlite_schema WHERE type = 'trigger'")
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var name, table string
		var text sql.NullString
		if err := rows.Scan(&name, &table, &text); err != nil {
			return nil, err
		}
		if want, ok := expectedSchema()["trigger "+name]; (ok && want.sql == text.String) || !ourTable(table) {
			continue
		}
		found = append(found, fmt.Sprintf("trigger %q on %s", name, table))
	}
	return found, rows.Err()
}

// refuseForeignTriggers returns ErrForeignSchema naming any foreign trigger
// on sessiondb's tables.
func refuseForeignTriggers(ctx context.Context, q gen.DBTX) error {
	found, err := foreignTriggers(ctx, q)
	if err != nil || len(found) == 0 {
		return err
	}
	return fmt.Errorf("%w: %s; a trigger runs inside every write and could change or delete what sessiondb acknowledges, "+
		"so it refuses to write through it (inspect it with sqlite3 and DROP TRIGGER it)", ErrForeignSchema, strings.Join(found, ", "))
}

// schemaVersion reads PRAGMA schema_version, which SQLite bumps with every
// schema change. Hand-written: sqlc cannot express PRAGMA.
func schemaVersion(ctx context.Context, q gen.DBTX) (int64, error) {
	var v int64
	err := q.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&v)
	return v, err
}

// guardCommit runs last in every write transaction, before COMMIT: when the schema changed since the writer last
// looked (a trigger planted while the store is open), it refuses the
// batch if a foreign trigger now fires on sessiondb's tables — everything
// the batch did, the trigger's work included, is rolled back — and it
// stamps the commit (stampWAL).
//
// +checklocks:w.mu
func (w *writer) guardCommit(ctx context.Context) error {
	v, err := schemaVersion(ctx, w.tx)
	if err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	if v != w.id.schema {
		if err := refuseForeignTriggers(ctx, w.tx); err != nil {
			return err
		}
		w.id.schema = v
	}
	return w.stampWAL(ctx)
}

// checkOpenSchema is Open's check, under the migration lock after the
// migrations: it refuses a foreign trigger and returns the schema version
// it found clean.
func checkOpenSchema(ctx context.Context, q gen.DBTX) (int64, error) {
	if err := refuseForeignTriggers(ctx, q); err != nil {
		return 0, err
	}
	return schemaVersion(ctx, q)
}

// sequenceHeadroom is how close to the largest rowid an AUTOINCREMENT
// counter may come before Verify calls it damage: a real store is more
// than a billion billion appends away from it, and at the maximum every
// append fails (SQLite answers SQLITE_FULL).
const sequenceHeadroom = math.MaxInt64 / 2

// schemaFindings compares the file's schema with the one sessiondb's
// migrations produce and returns each difference as a finding: an object
// sessiondb did not create (trigger, view, table, index), one of its own
// altered or missing, and an AUTOINCREMENT counter near its maximum. FTS
// shadow tables, SQLite's own objects and goose's table are not compared.
// A file not yet at the latest schema version (the next Open migrates it)
// is checked only for objects no migration creates by name, and a SQLite
// file without any sessiondb object not at all.
func schemaFindings(ctx context.Context, q gen.DBTX) ([]string, error) {
	have, err := querySchemaObjects(ctx, q, `
		SELECT m.type, m.name, COALESCE(m.sql, '') FROM sqlite_schema m
		LEFT JOIN pragma_table_list t ON t.schema = 'main' AND t.name = m.name
		WHERE m.name NOT LIKE 'sqlite_%' AND m.tbl_name NOT LIKE 'sqlite_%'
		  AND m.name <> 'goose_db_version' AND COALESCE(t.type, '') <> 'shadow'`)
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	if len(have) == 0 {
		return nil, nil // no sessiondb schema yet
	}
	want := expectedSchema()
	versioned, err := hasTable(ctx, q, "goose_db_version")
	if err != nil {
		return nil, err
	}
	if !versioned && !slices.ContainsFunc(have, func(o schemaObject) bool { _, ok := want[o.kind+" "+o.name]; return ok }) {
		return nil, nil // a SQLite file sessiondb has not migrated: nothing of ours to compare
	}
	current, err := atLatestVersion(ctx, q)
	if err != nil {
		return nil, err
	}
	var findings []string
	seen := map[string]bool{}
	for _, o := range have {
		key := o.kind + " " + o.name
		seen[key] = true
		exp, ok := want[key]
		switch {
		case !ok && !createdByMigrations()[o.name]:
			findings = append(findings, fmt.Sprintf("foreign schema: %s %q was not created by sessiondb", o.kind, o.name))
		case current && !ok:
			findings = append(findings, fmt.Sprintf("foreign schema: %s %q is not in sessiondb's schema", o.kind, o.name))
		case current && exp.sql != o.sql:
			findings = append(findings, fmt.Sprintf("foreign schema: %s %q differs from sessiondb's definition", o.kind, o.name))
		}
	}
	if current {
		for key := range want {
			if !seen[key] {
				findings = append(findings, "schema: sessiondb's "+key+" is missing")
			}
		}
	}
	sort.Strings(findings)
	seqs, err := sequenceFindings(ctx, q)
	return append(findings, seqs...), err
}

// atLatestVersion reports whether goose recorded this build's latest
// migration in the file (false without goose's table).
func atLatestVersion(ctx context.Context, q gen.DBTX) (bool, error) {
	if ok, err := hasTable(ctx, q, "goose_db_version"); err != nil || !ok {
		return false, err
	}
	var version int64
	// Hand-written: goose's table is not in sqlc's schema.
	if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version").Scan(&version); err != nil {
		return false, fmt.Errorf("read the schema version: %w", err)
	}
	return version == latestMigration(), nil
}

// sequenceFindings reports AUTOINCREMENT counters within sequenceHeadroom
// of the largest rowid.
func sequenceFindings(ctx context.Context, q gen.DBTX) ([]string, error) {
	if ok, err := hasTable(ctx, q, "sqlite_sequence"); err != nil || !ok {
		return nil, err
	}
	// Hand-written: sqlc cannot see sqlite_sequence.
	rows, err := q.QueryContext(ctx, "SELECT name, seq FROM sqlite_sequence WHERE seq >= ?", int64(math.MaxInt64-sequenceHeadroom))
	if err != nil {
		return nil, fmt.Errorf("read sqlite_sequence: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		var seq int64
		if err := rows.Scan(&name, &seq); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("sqlite_sequence: the id counter of %s is %d, within %d of the largest id: appends will fail", name, seq, math.MaxInt64-seq))
	}
	return out, rows.Err()
}

// createdByMigrations is every object name any migration creates, for a
// file that is not yet at the latest version.
var createdByMigrations = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	re := regexp.MustCompile(`(?i)CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)`)
	entries, _ := fs.ReadDir(migrationFS(), ".")
	for _, e := range entries {
		text, _ := fs.ReadFile(migrationFS(), e.Name())
		for _, m := range re.FindAllStringSubmatch(string(text), -1) {
			names[m[1]] = true
		}
	}
	return names
})

// repairForeignSchema is Repair's strategy for schema objects sessiondb did
// not create: on the scratch copy it drops every foreign trigger, view and
// index (they hold no data), puts back sessiondb's own triggers and
// indexes where they were altered or dropped, and sets an AUTOINCREMENT
// counter within sequenceHeadroom of the maximum back to its table's
// largest id. A foreign table is left alone (it may hold someone's data):
// the copy then does not verify, and a later strategy (salvage) copies
// sessiondb's rows out of the file, the backup keeping the rest.
func repairForeignSchema(ctx context.Context, d *sql.DB) error {
	if current, err := atLatestVersion(ctx, d); err != nil || !current {
		return err // an older schema is not ours to rebuild here: the next Open migrates it
	}
	have, err := querySchemaObjects(ctx, d, `SELECT type, name, COALESCE(sql, '') FROM sqlite_schema
		WHERE type IN ('trigger', 'view', 'index') AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return err
	}
	want := expectedSchema()
	found := map[string]bool{}
	// Hand-written: schema surgery is not expressible in sqlc; names are
	// quoted as identifiers.
	for _, o := range have {
		key := o.kind + " " + o.name
		if exp, ok := want[key]; ok && exp.sql == o.sql {
			found[key] = true
			continue
		}
		if _, err := d.ExecContext(ctx, "DROP "+strings.ToUpper(o.kind)+" "+quoteIdent(o.name)); err != nil {
			return fmt.Errorf("drop %s: %w", key, err)
		}
	}
	for key, o := range want {
		if (o.kind == "trigger" || o.kind == "index") && !found[key] {
			if _, err := d.ExecContext(ctx, o.sql); err != nil {
				return fmt.Errorf("restore %s: %w", key, err)
			}
		}
	}
	if ok, err := hasTable(ctx, d, "sqlite_sequence"); err != nil || !ok {
		return err
	}
	marked, err := hasTable(ctx, d, "fts_mark")
	if err != nil {
		return err
	}
	for table, o := range want {
		if o.kind != "table" || !strings.Contains(o.sql, "AUTOINCREMENT") {
			continue
		}
		// A message id at or below the index's mark must never be given
		// again (migration 12: the indexes would take it for indexed), and
		// the mark is past the last row when the newest indexed messages
		// were deleted: the counter goes back no further than the mark
		// (unless the mark is as far out as the counter was).
		floor := "0"
		if marked && o.name == "messages" {
			floor = "(SELECT indexed_through FROM fts_mark WHERE indexed_through < ?2)"
		}
		if _, err := d.ExecContext(ctx, "UPDATE sqlite_sequence SET seq = (SELECT MAX(COALESCE(MAX(rowid), 0), COALESCE("+floor+", 0)) FROM "+quoteIdent(o.name)+
			") WHERE name = ?1 AND seq >= ?2", o.name, int64(math.MaxInt64-sequenceHeadroom)); err != nil {
			return fmt.Errorf("reset the id counter of %s: %w", table, err)
		}
	}
	return nil
}

// quoteIdent quotes a name as an SQL identifier.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
