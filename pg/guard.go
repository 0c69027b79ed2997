package pg

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A trigger, rule or row-level-security policy on the store's tables runs
// inside every write and can undo it without an error: a trigger planted
// through psql that deletes each inserted message makes every append
// acknowledged and gone, and a retry with the same idempotency key
// acknowledged again with a new id. So the engine refuses to write
// through one, as the SQLite engine does (ErrForeignSchema): Open checks
// the schema, and every write transaction checks it again (writeGuard)
// after locking the store's tables, so an object planted while a store is
// open is refused by the next write, before it writes anything.
//
// The check reads facts that read alike on every server version: which
// triggers, rules and policies exist on the store's tables, whether row
// level security is on, and the source of each trigger's function (a
// CREATE OR REPLACE of sessiondb's own trigger function is caught too).

// guardQuery lists the objects on the store's tables ($2) in schema $1
// that run inside a write: triggers (each user trigger, and a constraint
// trigger only when disabled: a foreign key no longer enforced), rules,
// policies, and row level security. Hand-written: a catalog read.
const guardQuery = `
WITH rel AS (
    SELECT c.oid, c.relname, c.relrowsecurity OR c.relforcerowsecurity AS rls
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relname = ANY($2::text[])
)
SELECT 'trigger', r.relname || '.' || g.tgname,
       g.tgenabled::text || ' ' || p.proname::text || ' ' || p.prosrc || ' ' || COALESCE(array_to_string(p.proconfig, ' '), '')
FROM pg_trigger g JOIN rel r ON r.oid = g.tgrelid JOIN pg_proc p ON p.oid = g.tgfoid
WHERE NOT g.tgisinternal OR g.tgenabled <> 'O'
UNION ALL
SELECT 'rule', r.relname || '.' || w.rulename, pg_get_ruledef(w.oid) FROM pg_rewrite w JOIN rel r ON r.oid = w.ev_class
UNION ALL
SELECT 'policy', r.relname || '.' || p.polname, COALESCE(pg_get_expr(p.polqual, p.polrelid), '') FROM pg_policy p JOIN rel r ON r.oid = p.polrelid
UNION ALL
SELECT 'row level security', r.relname, 'enabled' FROM rel r WHERE r.rls`

// expectedGuard is what guardQuery finds on a store as sessiondb made it:
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

// writeHazards returns each object on the store's tables in schema that
// runs inside a write and is not sessiondb's own, as it made it.
func writeHazards(ctx context.Context, q querier, schema string) ([]string, error) {
	rows, err := q.Query(ctx, guardQuery, schema, ourTables())
	if err != nil {
		return nil, fmt.Errorf("read the schema's triggers: %w", err)
	}
	defer rows.Close()
	want := expectedGuard()
	var found []string
	for rows.Next() {
		var kind, name, state string
		if err := rows.Scan(&kind, &name, &state); err != nil {
			return nil, fmt.Errorf("read the schema's triggers: %w", err)
		}
		if kind == "trigger" {
			// proconfig holds the search_path as the creating connection had it, quoted or not.
			state = strings.NewReplacer(`search_path="`+schema+`"`, "search_path=<schema>", "search_path="+schema, "search_path=<schema>").Replace(state)
			state = strings.Join(strings.Fields(state), " ")
			if w, ok := want[kind+" "+name]; ok && w == state {
				continue
			}
			if _, ok := want[kind+" "+name]; ok {
				found = append(found, fmt.Sprintf("sessiondb's trigger %s was altered (disabled, or its function replaced)", name))
				continue
			}
		}
		table, object, _ := strings.Cut(name, ".")
		if object == "" {
			found = append(found, fmt.Sprintf("%s on %s", kind, table))
		} else {
			found = append(found, fmt.Sprintf("%s %q on %s", kind, object, table))
		}
	}
	return found, rows.Err()
}

// hazardError is ErrForeignSchema naming what writeHazards found.
func hazardError(schema string, found []string) error {
	return fmt.Errorf("%w: %s in schema %s; it runs inside every write and could change or delete what sessiondb acknowledges, "+
		"so sessiondb refuses to write through it (inspect it with psql, \\d+ TABLE, and drop it; pg.Verify lists every foreign object)",
		driver.ErrForeignSchema, strings.Join(found, ", "), schema)
}

// lockTablesSQL locks every table of the store in schema in ROW EXCLUSIVE
// mode, the mode any write takes: it conflicts with no other writer, but
// with CREATE TRIGGER, CREATE RULE, CREATE POLICY and ALTER TABLE, so no
// such object can appear on the tables between a write's guard and its
// COMMIT. Sent before the transaction's first query, it also comes before
// its snapshot (a LOCK TABLE takes none), so the guard sees every object
// committed before the lock.
func lockTablesSQL(schema string) string {
	names := make([]string, len(ourTables()))
	for i, t := range ourTables() {
		names[i] = pgx.Identifier{schema, t}.Sanitize()
	}
	return "LOCK TABLE " + strings.Join(names, ", ") + " IN ROW EXCLUSIVE MODE"
}

// writeGuard is the check every write transaction runs first, after its
// BEGIN locked the store's tables (lockTablesSQL): ErrForeignSchema when a
// trigger, rule or policy not sessiondb's now runs inside writes. One
// catalog read (measured in docs/PERFORMANCE.md). Kept a function of its
// own so a write path of another shape can call it.
func writeGuard(ctx context.Context, tx pgx.Tx, schema string) error {
	found, err := writeHazards(ctx, tx, schema)
	if err != nil || len(found) == 0 {
		return err
	}
	return hazardError(schema, found)
}

// checkOpenSchema is Open's check of a migrated schema: the write hazards,
// and the store's columns as sessiondb made them (an altered default or
// type changes what a write stores).
func checkOpenSchema(ctx context.Context, q querier, schema string) error {
	found, err := writeHazards(ctx, q, schema)
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
