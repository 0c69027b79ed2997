package pg

import "testing"

// TestWithSearchPath: the tests' connection strings take either form the
// README allows for SESSIONDB_PG_DSN, and each parses with the schema set.
func TestWithSearchPath(t *testing.T) {
	for _, dsn := range []string{
		"host=/tmp/pgsock port=5432 user=postgres dbname=postgres",
		"postgres://postgres@localhost:5432/postgres?sslmode=disable",
		"postgresql:///postgres?host=/tmp/pgsock&user=postgres",
	} {
		got := withSearchPath(t, dsn, "t_abc")
		cfg, err := ParseConfig(got, "")
		if err != nil {
			t.Errorf("%q → %q: %v", dsn, got, err)
			continue
		}
		if schema, err := SchemaOf(cfg); err != nil || schema != "t_abc" {
			t.Errorf("%q → %q: schema %q, %v; want t_abc", dsn, got, schema, err)
		}
	}
}
