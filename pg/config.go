package pg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrInvalidConfig reports a connection string or schema name this engine
// cannot use.
var ErrInvalidConfig = errors.New("invalid postgres configuration")

// defaultSchema holds a store whose connection string names no schema.
const defaultSchema = "public"

// ParseConfig parses a connection string (URL or key=value) into a pool
// configuration whose every connection works in the store's schema: the
// schema argument when it is not empty, else the first entry of the
// string's search_path parameter (postgres://…?search_path=team_a), else
// public. One database can so hold several stores, one schema each.
// Behind a connection pooler the string says which kind with pool_mode
// (session or transaction, as in pgbouncer.ini; see pooler.go), and the
// pool's connections are configured for it.
func ParseConfig(connString, schema string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		// pgx's message leaves the password out.
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	params := cfg.ConnConfig.RuntimeParams
	if schema == "" {
		if schema, err = firstSchema(params["search_path"]); err != nil {
			return nil, err
		}
	}
	if err := validSchema(schema); err != nil {
		return nil, err
	}
	if schema != firstSchemaOrEmpty(params["search_path"]) {
		params["search_path"] = pgx.Identifier{schema}.Sanitize()
	}
	// Behind a connection pooler (pool_mode=session|transaction): pooler.go.
	if err := applyPoolMode(cfg, schema, execModeSet(connString)); err != nil {
		return nil, err
	}
	return cfg, nil
}

// SchemaOf names the schema a pool's connections work in: the first entry
// of its search_path (public when it has none). Migrate and the queries
// both resolve unqualified names there.
func SchemaOf(cfg *pgxpool.Config) (string, error) {
	return firstSchema(cfg.ConnConfig.RuntimeParams["search_path"])
}

// firstSchema parses the first entry of a search_path value: a plain or
// double-quoted identifier. "$user" is refused: which schema it means
// depends on the role, and a store must know its schema.
func firstSchema(searchPath string) (string, error) {
	entry := strings.TrimSpace(searchPath)
	if entry == "" {
		return defaultSchema, nil
	}
	var name string
	if strings.HasPrefix(entry, `"`) {
		end := 1
		var b strings.Builder
		for ; end < len(entry); end++ {
			if entry[end] == '"' {
				if end+1 < len(entry) && entry[end+1] == '"' {
					b.WriteByte('"')
					end++
					continue
				}
				break
			}
			b.WriteByte(entry[end])
		}
		if end >= len(entry) {
			return "", fmt.Errorf("%w: search_path %q: unterminated quote", ErrInvalidConfig, searchPath)
		}
		rest := strings.TrimSpace(entry[end+1:])
		if rest != "" && !strings.HasPrefix(rest, ",") {
			return "", fmt.Errorf("%w: search_path %q: text after a quoted name", ErrInvalidConfig, searchPath)
		}
		name = b.String()
	} else {
		first, _, _ := strings.Cut(entry, ",")
		// PostgreSQL folds unquoted identifiers to lower case.
		name = strings.ToLower(strings.TrimSpace(first))
	}
	if name == "$user" {
		return "", fmt.Errorf("%w: search_path %q: a store needs a named schema first, not $user", ErrInvalidConfig, searchPath)
	}
	if err := validSchema(name); err != nil {
		return "", err
	}
	return name, nil
}

func firstSchemaOrEmpty(searchPath string) string {
	if strings.TrimSpace(searchPath) == "" {
		return ""
	}
	name, err := firstSchema(searchPath)
	if err != nil {
		return ""
	}
	return name
}

// validSchema refuses a name the store cannot live in: a system schema
// (pg_catalog, pg_toast, pg_temp_N and every other pg_ name, and
// information_schema, where the server keeps its own views and a store's
// tables would hide among them), and any name that is not a plain
// lower-case identifier (letters, digits and _, not starting with a
// digit). A plain name reads the same quoted or not, in a URL, a
// search_path, psql and every tool a DBA points at the store; a name like
// "A B" or we"ird needs quoting that one of them will get wrong.
func validSchema(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty schema name", ErrInvalidConfig)
	case len(name) > 63:
		return fmt.Errorf("%w: schema name %q is longer than 63 bytes", ErrInvalidConfig, name)
	case strings.HasPrefix(name, "pg_"), name == "information_schema":
		return fmt.Errorf("%w: schema %q is a system schema of PostgreSQL; name a schema of your own", ErrInvalidConfig, name)
	case !plainIdentifier(name):
		return fmt.Errorf("%w: schema name %q: use a plain lower-case name (a-z, 0-9 and _, not starting with a digit), "+
			"which needs no quoting anywhere", ErrInvalidConfig, name)
	}
	return nil
}

func plainIdentifier(name string) bool {
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r == '_':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
