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
		{"quoted keeps case", `postgres://u@h/db?search_path=%22Team%20A%22`, "", "Team A", `"Team A"`},
		{"keyword form", "host=/tmp user=u dbname=db search_path=team_b", "", "team_b", "team_b"},
		{"option wins", "postgres://u@h/db?search_path=team_a", "team_c", "team_c", `"team_c"`},
		{"option quoted", "postgres://u@h/db", `we"ird`, `we"ird`, `"we""ird"`},
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
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseConfig(tc.conn, tc.option); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("ParseConfig(%q, %q) = %v, want ErrInvalidConfig", tc.conn, tc.option, err)
			}
		})
	}
}
