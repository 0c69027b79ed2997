package pg

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A trigger, rule or row-level-security policy on the store's tables runs
// inside every write and can undo it without an error: a trigger planted
// through psql that deletes each inserted message makes every append
// acknowledged and gone, and a retry with the same idempotency key
// acknowledged again with a new id. So the engine refuses to write
// through one, as the SQLite engine does (ErrForeignSchema): Open checks
// the schema, and every write transaction checks it again
// (schemaGuard.check) after locking the store's tables, so an object
// planted while a store is open is refused by the next write, before it
// writes anything.
//
// The check reads facts that read alike on every server version: which
// triggers, rules and policies exist on the store's tables, whether row
// level security is on, and the source of each trigger's function (a
// CREATE OR REPLACE of sessiondb's own trigger function is caught too).

// guardQuery lists the store's tables (the OIDs %[1]s) that still exist,
// with whether row level security is on and their schema's OID and name
// (a table renamed or moved away is no longer the one writes reach by
// name), and the objects on them that run inside a write: triggers (each
// user trigger, and a constraint trigger only when disabled: a foreign key
// no longer enforced), rules and policies. Tables are named by OID (schemaGuard names them). Hand-written:
// a catalog read. The OIDs are literals, not parameters, so each
// connection plans the query once (pgx's statement cache): with the
// schema and table names as parameters the server planned it anew at
// every execution.
const guardQuery = `
SELECT 'table', c.oid::text, (c.relrowsecurity OR c.relforcerowsecurity)::text || ' ' || c.relnamespace::text || ' ' || c.relname::text
FROM pg_class c WHERE c.oid = ANY ('{%[1]s}'::oid[])
UNION ALL
SELECT 'trigger', g.tgrelid::text || '.' || g.tgname,
       g.tgenabled::text || ' ' || p.proname::text || ' ' || p.prosrc || ' ' || COALESCE(array_to_string(p.proconfig, ' '), '')
FROM pg_trigger g JOIN pg_proc p ON p.oid = g.tgfoid
WHERE g.tgrelid = ANY ('{%[1]s}'::oid[]) AND (NOT g.tgisinternal OR g.tgenabled <> 'O')
UNION ALL
SELECT 'rule', w.ev_class::text || '.' || w.rulename, '' FROM pg_rewrite w WHERE w.ev_class = ANY ('{%[1]s}'::oid[])
UNION ALL
SELECT 'policy', p.polrelid::text || '.' || p.polname, '' FROM pg_policy p WHERE p.polrelid = ANY ('{%[1]s}'::oid[])`

// expectedGuard is what the guard finds on a store as sessiondb made it:
// its own triggers, each enabled and calling its own function with that
// function's source, keyed as guardQuery keys them. It comes from
// catalog.golden.
var expectedGuard = sync.OnceValue(func() map[string]string {
	entries, _ := goldenCatalog()
	bodies := map[string]string{}
	for _, e := range entries {
		if e.kind != "function" {
			continue
		}
		name, _, _ := strings.Cut(e.name, "(")
		if m := functionBodyRE.FindStringSubmatch(e.def); m != nil {
			config := ""
			if c := functionConfigRE.FindStringSubmatch(e.def); c != nil {
				config = c[1] + "=" + strings.Trim(c[2], "'")
			}
			bodies[name] = guardState("O", name, m[1], config)
		}
	}
	want := map[string]string{}
	for _, e := range entries {
		if e.kind == "trigger" {
			if m := triggerFunctionRE.FindStringSubmatch(e.def); m != nil {
				want["trigger "+e.name] = bodies[m[1]]
			}
		}
	}
	return want
})

var (
	functionBodyRE    = regexp.MustCompile(`AS \$function\$ ?(.*?) ?\$function\$`)
	functionConfigRE  = regexp.MustCompile(` SET (\w+) TO ('[^']*'|\S+)`)
	triggerFunctionRE = regexp.MustCompile(`EXECUTE FUNCTION (\w+)\(`)
)

// guardState is a trigger's state as the guard compares it: enabled, its
// function and that function's source and settings, whitespace collapsed.
func guardState(enabled, function, source, config string) string {
	return strings.Join(strings.Fields(enabled+" "+function+" "+source+" "+config), " ")
}

// schemaGuard checks one store's tables for objects that run inside its
// writes. Built once per store (newSchemaGuard), it holds the tables'
// OIDs: tables dropped and made again under an open store are not the
// ones it checked, and it says so.
type schemaGuard struct {
	schema string
	query  string // guardQuery for the tables' OIDs
	// ownPath writes the schema in a trigger function's search_path as
	// expectedGuard does (<schema>): built once, every write reads it.
	ownPath *strings.Replacer
	names   map[string]string // each table's name by its OID, as text
	nsp     string            // the schema's OID, as text
	// lockTables locks the tables in ROW EXCLUSIVE mode, the mode any
	// write takes: it conflicts with no other writer, but with CREATE
	// TRIGGER, CREATE RULE, CREATE POLICY and ALTER TABLE, so no such
	// object can appear on the tables between a write's guard and its
	// COMMIT. Sent with the BEGIN, before the transaction's first query,
	// it also comes before its snapshot (a LOCK TABLE takes none), so the
	// guard sees every object committed before the lock.
	lockTables string
	// unchanged is the guard as one statement (oneround.go): it fails,
	// dividing by zero, unless guardQuery reads exactly what it read the
	// last time hazards found none (clean, the fingerprint of those rows:
	// guardFingerprint).
	unchanged string
	clean     atomic.Pointer[cleanGuard]
}

// cleanGuard is what guardQuery read the last time it found no hazard:
// its rows' fingerprint and count.
type cleanGuard struct {
	fingerprint string
	rows        int
}

// guardFingerprint is the md5 of guardQuery's rows as unchanged computes
// it on the server: each row's three columns joined by a unit separator,
// the rows in byte order of kind and name (unique together) joined by a
// record separator.
func guardFingerprint(rows [][3]string) string {
	slices.SortFunc(rows, func(a, b [3]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = r[0] + "\x1f" + r[1] + "\x1f" + r[2]
	}
	sum := md5.Sum([]byte(strings.Join(lines, "\x1e")))
	return hex.EncodeToString(sum[:])
}

// newSchemaGuard resolves the store's tables in schema. A table missing
// (a store not yet migrated) is left out; hazards then reports it.
func newSchemaGuard(ctx context.Context, q querier, schema string) (*schemaGuard, error) {
	// Hand-written: a catalog read.
	rows, err := q.Query(ctx, `SELECT c.oid::text, c.relname::text, n.oid::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = ANY($2::text[]) AND c.relkind IN ('r', 'p')`, schema, ourTables())
	if err != nil {
		return nil, fmt.Errorf("read the store's tables: %w", err)
	}
	g := &schemaGuard{schema: schema, names: map[string]string{},
		ownPath: strings.NewReplacer(`search_path="`+schema+`"`, "search_path=<schema>", "search_path="+schema, "search_path=<schema>")}
	var oids []string
	for rows.Next() {
		var oid, name string
		if err := rows.Scan(&oid, &name, &g.nsp); err != nil {
			return nil, fmt.Errorf("read the store's tables: %w", err)
		}
		g.names[oid] = name
		oids = append(oids, oid)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the store's tables: %w", err)
	}
	g.query = fmt.Sprintf(guardQuery, strings.Join(oids, ","))
	names := make([]string, len(ourTables()))
	for i, t := range ourTables() {
		names[i] = pgx.Identifier{schema, t}.Sanitize()
	}
	g.lockTables = "LOCK TABLE " + strings.Join(names, ", ") + " IN ROW EXCLUSIVE MODE"
	// Hand-written: the guard's catalog read, checked on the server. The
	// COLLATE "C" order is byte order, guardFingerprint's.
	g.unchanged = `SELECT 1 / COALESCE(count(*) = $2 AND md5(string_agg(k || chr(31) || n || chr(31) || s, chr(30)
		ORDER BY k COLLATE "C", n COLLATE "C")) = $1, false)::int FROM (` + g.query + `) AS g (k, n, s)`
	return g, nil
}

// hazards returns each object on the store's tables that runs inside a
// write and is not sessiondb's own as it made it, and says so when some
// of its tables are missing or were made again since the guard was built.
func (g *schemaGuard) hazards(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.Query(ctx, g.query)
	if err != nil {
		return nil, fmt.Errorf("read the schema's triggers: %w", err)
	}
	defer rows.Close()
	want := expectedGuard()
	var found []string
	var read [][3]string
	tables := 0
	for rows.Next() {
		var kind, name, state string
		if err := rows.Scan(&kind, &name, &state); err != nil {
			return nil, fmt.Errorf("read the schema's triggers: %w", err)
		}
		read = append(read, [3]string{kind, name, state})
		oid, object, _ := strings.Cut(name, ".")
		table := g.names[oid]
		switch kind {
		case "table":
			f := strings.Fields(state) // row level security, schema, name
			if len(f) != 3 || f[1] != g.nsp || f[2] != table {
				continue // renamed or moved: counted missing below
			}
			tables++
			if f[0] == "true" {
				found = append(found, "row level security on "+table)
			}
			continue
		case "trigger":
			// proconfig holds the search_path as the creating connection
			// had it, quoted or not.
			state = g.ownPath.Replace(state)
			w, ours := want["trigger "+table+"."+object]
			if ours && w == strings.Join(strings.Fields(state), " ") {
				continue
			}
			if ours {
				found = append(found, fmt.Sprintf("sessiondb's trigger %s.%s was altered (disabled, or its function replaced)", table, object))
				continue
			}
		}
		found = append(found, fmt.Sprintf("%s %q on %s", kind, object, table))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the schema's triggers: %w", err)
	}
	if tables != len(ourTables()) {
		found = append(found, fmt.Sprintf("%d of sessiondb's %d tables are not the ones the store opened "+
			"(missing, renamed, or dropped and made again since: open the store again)", len(ourTables())-tables, len(ourTables())))
	}
	if len(found) == 0 {
		g.clean.Store(&cleanGuard{fingerprint: guardFingerprint(read), rows: len(read)})
	} else {
		g.clean.Store(nil)
	}
	return found, nil
}

// check is the guard every write transaction runs first, after its BEGIN
// locked the store's tables (lockTables): ErrForeignSchema when a
// trigger, rule or policy not sessiondb's now runs inside writes. One
// catalog read (its cost is in docs/PERFORMANCE.md). A method of its own
// so that a write path of another shape (a batch of writes in one
// transaction) can call it once per transaction.
func (g *schemaGuard) check(ctx context.Context, tx pgx.Tx) error {
	found, err := g.hazards(ctx, tx)
	if err != nil || len(found) == 0 {
		return err
	}
	return hazardError(g.schema, found)
}

// hazardError is ErrForeignSchema naming what a guard found.
func hazardError(schema string, found []string) error {
	return fmt.Errorf("%w: %s in schema %s; it runs inside every write and could change or delete what sessiondb acknowledges, "+
		"so sessiondb refuses to write through it (inspect it with psql, \\d+ TABLE, and drop it; pg.Verify lists every foreign object)",
		driver.ErrForeignSchema, strings.Join(found, ", "), schema)
}

// checkOpenSchema is Open's check of a migrated schema: the write hazards,
// and the store's columns as sessiondb made them (an altered default or
// type changes what a write stores).
func checkOpenSchema(ctx context.Context, q querier, g *schemaGuard) error {
	schema := g.schema
	found, err := g.hazards(ctx, q)
	if err != nil {
		return err
	}
	have, err := readCatalog(ctx, q, schema)
	if err != nil {
		return err
	}
	var columns []catalogEntry // of sessiondb's tables: a table of the DBA's is not written
	for _, e := range have {
		if table, _, _ := strings.Cut(e.name, "."); e.kind == "column" && slices.Contains(ourTables(), table) {
			columns = append(columns, e)
		}
	}
	for _, f := range catalogFindings(columns, "") {
		if strings.Contains(f, " column ") {
			found = append(found, strings.TrimPrefix(strings.TrimPrefix(f, "foreign schema: "), "schema: "))
		}
	}
	if len(found) == 0 {
		return nil
	}
	return hazardError(schema, found)
}
