package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// serverURL is a postgres:// URL on the test server (SESSIONDB_PG_DSN, a
// URL or a key=value string) whose search_path is a schema no other test
// uses, dropped when the test ends. Without a server the test skips
// locally, saying how to get one, and fails in CI, which must run it.
func serverURL(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("SESSIONDB_PG_DSN")
	if dsn == "" {
		const how = "SESSIONDB_PG_DSN is not set: run `bash scripts/test.sh` from the repository root " +
			"(it starts a throwaway PostgreSQL cluster), or point SESSIONDB_PG_DSN at a server " +
			"(e.g. host=/tmp/pgsock port=5432 user=postgres dbname=postgres)"
		if os.Getenv("CI") == "true" {
			t.Fatal(how)
		}
		t.Skip(how)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "cli_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return dsnURL(t, dsn, schema)
}

// dsnURL turns a connection string into the postgres:// URL the CLI
// takes, working in schema. A key=value string becomes query parameters
// (libpq's URL form accepts every keyword there); quoted values are not
// needed by the test servers and not handled.
func dsnURL(t *testing.T, dsn, schema string) string {
	t.Helper()
	if isServerURL(dsn) {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("SESSIONDB_PG_DSN: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	q := url.Values{"search_path": {schema}}
	for _, kv := range strings.Fields(dsn) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.ContainsAny(v, `'\`) {
			t.Fatalf("SESSIONDB_PG_DSN: %q is not a plain key=value pair", kv)
		}
		q.Set(k, v)
	}
	return "postgres:///?" + q.Encode()
}

// serverRows counts the rows of table in the schema u works in, asking the
// server directly: proof that a command wrote there and not to a file
// that happens to be named like a URL.
func serverRows(t *testing.T, u, table string) int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}
