package pg

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestWithSearchPath: the tests' connection strings take either form the
// README allows for SESSIONDB_PG_DSN, and each parses with the schema set.
func TestWithSearchPath(t *testing.T) {
	for _, dsn := range []string{
		"host=/tmp/pgsock port=5432 user=postgres dbname=postgres",
		"postgres://postgres@localhost:5432/postgres?sslmode=disable",
		"postgresql:///postgres?host=/tmp/pgsock&user=postgres",
	} {
		// want "": a name the store refuses (ParseConfig's rules), but the
		// connection string must still carry it as written.
		for path, want := range map[string]string{"t_abc": "t_abc", `"A b's"`: "", "team_a,public": "team_a"} {
			got := withSearchPath(t, dsn, path)
			cfg, err := pgxpool.ParseConfig(got)
			if err != nil {
				t.Errorf("%q → %q: %v", dsn, got, err)
				continue
			}
			if sp := cfg.ConnConfig.RuntimeParams["search_path"]; sp != path {
				t.Errorf("%q → %q: search_path %q, want %q", dsn, got, sp, path)
			}
			if schema, err := SchemaOf(cfg); (err == nil) != (want != "") || schema != want {
				t.Errorf("%q → %q: schema %q, %v; want %q", dsn, got, schema, err, want)
			}
		}
	}
}
