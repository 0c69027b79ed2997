package pg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// newRole creates a login role of its own for the test (roles are the
// cluster's, so the name is random) and drops it, with everything it
// owns, when the test ends. The setup statements run as the server's
// superuser after it is made, with %s the role's name.
func newRole(t *testing.T, prefix string, setup ...string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	role := prefix + "_" + hex.EncodeToString(b)
	admin := adminConn(t)
	ident := pgx.Identifier{role}.Sanitize()
	stmts := append([]string{"CREATE ROLE " + ident + " LOGIN"}, setup...)
	for _, q := range stmts {
		if _, err := admin.Exec(context.Background(), strings.ReplaceAll(q, "%s", ident)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		admin := adminConn(t)
		for _, q := range []string{"DROP OWNED BY " + ident + " CASCADE", "DROP ROLE " + ident} {
			if _, err := admin.Exec(context.Background(), q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	return role
}

// adminConn is a connection as the test server's own user, closed when
// the test ends.
func adminConn(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := connectTest(context.Background(), testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// dsnAs is the test server's connection string for another role (the
// throwaway cluster trusts every local role).
func dsnAs(t *testing.T, role string) string {
	t.Helper()
	dsn := testDSN(t)
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(role)
		return u.String()
	}
	return dsn + " user=" + role
}

// Schema squatting, as reproduced on 63b5fb9: mallory makes a store in
// her schema and grants alice; alice, pointed at it, wrote where mallory
// read; alice building her store in an empty schema mallory made could
// have it dropped by mallory. Open now refuses both, naming the owner,
// before creating anything, unless alice trusts mallory by name.
func TestOpenRefusesASchemaAnotherRoleOwns(t *testing.T) {
	ctx := t.Context()
	grant := "GRANT CREATE ON DATABASE " + pgx.Identifier{currentDatabase(t)}.Sanitize() + " TO %s"
	mallory := newRole(t, "mallory", grant)
	alice := newRole(t, "alice", grant)

	trap := freshSchema(t)
	m, err := Open(ctx, dsnAs(t, mallory), Options{Schema: trap})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	empty := freshSchema(t)
	admin := adminConn(t)
	for _, q := range []string{
		"GRANT USAGE ON SCHEMA " + trap + " TO " + alice,
		"GRANT ALL ON ALL TABLES IN SCHEMA " + trap + " TO " + alice,
		"GRANT ALL ON ALL SEQUENCES IN SCHEMA " + trap + " TO " + alice,
		"CREATE SCHEMA " + empty + " AUTHORIZATION " + mallory,
		"GRANT USAGE, CREATE ON SCHEMA " + empty + " TO " + alice,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	for _, tc := range []struct{ dsn, schema string }{
		{withSearchPath(t, dsnAs(t, alice), trap), ""},
		{dsnAs(t, alice), trap},
		{withSearchPath(t, dsnAs(t, alice), empty), ""},
		{dsnAs(t, alice), empty},
	} {
		s, err := Open(ctx, tc.dsn, Options{Schema: tc.schema})
		var owner *OwnerError
		if !errors.Is(err, ErrUntrustedOwner) || !errors.As(err, &owner) || owner.Owner != mallory || owner.User != alice ||
			!strings.Contains(err.Error(), "owned by role "+mallory) {
			if err == nil {
				s.Close()
			}
			t.Fatalf("alice opens %q (schema %q) = %v, want ErrUntrustedOwner naming %s", tc.dsn, tc.schema, err, mallory)
		}
	}
	var tables int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = $1", empty).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("refused open left %d tables in %s", tables, empty)
	}

	// Trusting mallory by name opens her store.
	s, err := Open(ctx, dsnAs(t, alice), Options{Schema: trap, TrustedOwners: []string{mallory}})
	if err != nil {
		t.Fatalf("alice trusting %s: %v", mallory, err)
	}
	s.Close()

	// A schema of alice's own opens, and Verify finds nothing.
	own := freshSchema(t)
	s, err = Open(ctx, dsnAs(t, alice), Options{Schema: own})
	if err != nil {
		t.Fatalf("alice's own schema: %v", err)
	}
	defer s.Close()
	if r, err := s.Verify(ctx); err != nil || !r.OK() {
		t.Errorf("Verify of alice's store = %q, %v", r.Findings, err)
	}
	// Verify of mallory's store, as alice, names the owner.
	r, err := Verify(ctx, dsnAs(t, alice), Options{Schema: trap})
	if err != nil || !strings.Contains(strings.Join(r.Findings, "\n"), "owned by role "+mallory) {
		t.Errorf("Verify of %s as alice = %q, %v; want the owner named", trap, r.Findings, err)
	}
}

// A connection whose current_schema() is not the configured schema (a
// pooler dropped search_path; here the role's own setting wins over a
// schema that is not there) is refused before any table is made.
func TestOpenRefusesAConnectionInAnotherSchema(t *testing.T) {
	ctx := t.Context()
	cfg, err := ParseConfig(testDSN(t), freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool := openPoolConfig(t, cfg)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// As a pooler would: the session's search_path is not the one asked for.
	if _, err := conn.Exec(ctx, "SET search_path = public"); err != nil {
		t.Fatal(err)
	}
	conn.Release()
	admin := adminConn(t)
	inPublic := func() (n int) {
		if err := admin.QueryRow(context.Background(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename = 'goose_db_version'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if before := inPublic(); before == 0 {
		// Without the check the store is made in public: take it out again.
		t.Cleanup(func() {
			if inPublic() > 0 {
				for _, table := range append(ourTables(), "goose_db_version") {
					_, _ = admin.Exec(context.Background(), "DROP TABLE IF EXISTS public."+table+" CASCADE")
				}
			}
		})
	}
	_, err = Migrate(ctx, pool)
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "current_schema()") {
		t.Fatalf("Migrate on a connection in public = %v, want ErrInvalidConfig naming current_schema()", err)
	}
}

// System schemas and names that need quoting: on 63b5fb9
// search_path=information_schema made the store's tables among the
// server's own views. Refused now, with nothing created.
func TestOpenRefusesSystemSchemas(t *testing.T) {
	ctx := t.Context()
	admin := adminConn(t)
	for _, tc := range []struct{ dsn, schema string }{
		{withSearchPath(t, testDSN(t), "information_schema"), ""},
		{testDSN(t), "information_schema"},
		{testDSN(t), "pg_catalog"},
		{withSearchPath(t, testDSN(t), `"A B"`), ""},
		{testDSN(t), "A B"},
	} {
		s, err := Open(ctx, tc.dsn, Options{Schema: tc.schema})
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Open(%q, schema %q) = %v, want ErrInvalidConfig", tc.dsn, tc.schema, err)
		}
	}
	var n int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('information_schema', 'pg_catalog', 'A B') AND c.relname IN ('sessions', 'messages', 'goose_db_version')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d store tables in system schemas", n)
		// Take them out again, so the server stays usable.
		for _, table := range append(ourTables(), "goose_db_version") {
			_, _ = admin.Exec(ctx, "DROP TABLE IF EXISTS information_schema."+table+" CASCADE")
		}
		_, _ = admin.Exec(ctx, `DO $$ DECLARE f regprocedure; BEGIN
			FOR f IN SELECT oid FROM pg_proc WHERE pronamespace = 'information_schema'::regnamespace
				AND (proname LIKE 'sessiondb%' OR proname = 'messages_last_message_at') LOOP
				EXECUTE 'DROP FUNCTION ' || f || ' CASCADE'; END LOOP; END $$`)
		_, _ = admin.Exec(ctx, `DROP SCHEMA IF EXISTS "A B" CASCADE`)
	}
}

func currentDatabase(t *testing.T) string {
	t.Helper()
	var db string
	if err := adminConn(t).QueryRow(context.Background(), "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	return db
}
