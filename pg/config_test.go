package pg

import (
	"errors"
	"testing"
)

func TestParseConfigSchema(t *testing.T) {
	for _, tc := range []struct {
		name, conn, option string
		schema, searchPath string // want
	}{
		{"default", "postgres://u@h/db", "", "public", `"public"`},
		{"url search_path", "postgres://u@h/db?search_path=team_a", "", "team_a", "team_a"},
		{"url search_path list kept", "postgres://u@h/db?search_path=team_a,public", "", "team_a", "team_a,public"},
		{"unquoted folds to lower case", "postgres://u@h/db?search_path=Team_A", "", "team_a", "Team_A"},
		{"quoted plain name", `postgres://u@h/db?search_path=%22team_a%22,public`, "", "team_a", `"team_a",public`},
		{"keyword form", "host=/tmp user=u dbname=db search_path=team_b", "", "team_b", "team_b"},
		{"option wins", "postgres://u@h/db?search_path=team_a", "team_c", "team_c", `"team_c"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(tc.conn, tc.option)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.ConnConfig.RuntimeParams["search_path"]; got != tc.searchPath {
				t.Errorf("search_path = %q, want %q", got, tc.searchPath)
			}
			schema, err := SchemaOf(cfg)
			if err != nil || schema != tc.schema {
				t.Errorf("SchemaOf = %q, %v; want %q", schema, err, tc.schema)
			}
		})
	}
}

func TestParseConfigRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ conn, option string }{
		"$user first":       {"postgres://u@h/db?search_path=$user,public", ""},
		"unterminated":      {`postgres://u@h/db?search_path=%22abc`, ""},
		"reserved prefix":   {"postgres://u@h/db", "pg_store"},
		"too long":          {"postgres://u@h/db", "s234567890123456789012345678901234567890123456789012345678901234"},
		"bad conn string":   {"postgres://u@h:notaport/db", ""},
		"empty quoted name": {`postgres://u@h/db?search_path=%22%22`, ""},
		// System schemas: the tables would be created among the server's own.
		"information_schema":        {"postgres://u@h/db?search_path=information_schema", ""},
		"information_schema option": {"postgres://u@h/db", "information_schema"},
		"pg_catalog":                {"postgres://u@h/db?search_path=pg_catalog", ""},
		"pg_temp":                   {"postgres://u@h/db?search_path=pg_temp", ""},
		// Names that need quoting somewhere.
		"space":         {`postgres://u@h/db?search_path=%22A%20B%22`, ""},
		"upper case":    {`postgres://u@h/db?search_path=%22Team_A%22`, ""},
		"quote in name": {"postgres://u@h/db", `we"ird`},
		"leading digit": {"postgres://u@h/db", "1store"},
		"dot":           {"postgres://u@h/db", "a.b"},
		// Pooler modes (pooler.go).
		"pool_mode statement": {"postgres://u@h/db?pool_mode=statement", "s"},
		"prepared statements in transaction mode": {
			"postgres://u@h/db?pool_mode=transaction&default_query_exec_mode=cache_statement", "s"},
		"described statements in transaction mode": {
			"postgres://u@h/db?pool_mode=transaction&default_query_exec_mode=cache_describe", "s"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseConfig(tc.conn, tc.option); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("ParseConfig(%q, %q) = %v, want ErrInvalidConfig", tc.conn, tc.option, err)
			}
		})
	}
}
