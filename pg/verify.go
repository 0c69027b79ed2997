package pg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// VerifyReport is what Verify found in a store's schema.
type VerifyReport struct {
	Schema string
	// Findings names each object of the schema sessiondb did not create
	// (a trigger, rule, policy, index, column, table, function…), each of
	// its own altered or missing, and each owned by a role the caller did
	// not trust (see Options.TrustedOwners). Empty when the schema is
	// exactly as sessiondb's migrations made it.
	Findings []string
}

// OK reports a schema with nothing to report.
func (r VerifyReport) OK() bool { return len(r.Findings) == 0 }

// Verify checks the store in the schema connString (or opts.Schema)
// names against sessiondb's own schema, without creating, migrating or
// changing anything: it runs where Open refuses (a foreign trigger). It
// returns an error only when the check itself could not run.
func Verify(ctx context.Context, connString string, opts Options) (VerifyReport, error) {
	cfg, err := ParseConfig(connString, opts.Schema)
	if err != nil {
		return VerifyReport{}, fmt.Errorf("verify: %w", err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return VerifyReport{}, fmt.Errorf("verify: %w", err)
	}
	defer pool.Close()
	schema, err := SchemaOf(cfg)
	if err != nil {
		return VerifyReport{}, fmt.Errorf("verify: %w", err)
	}
	return verifySchema(ctx, pool, schema, opts.TrustedOwners)
}

// Verify checks the store's schema as the package's Verify does.
func (s *Store) Verify(ctx context.Context) (VerifyReport, error) {
	return verifySchema(ctx, s.eng.pool, s.eng.schema, s.eng.trusted)
}

func verifySchema(ctx context.Context, pool *pgxpool.Pool, schema string, trusted []string) (VerifyReport, error) {
	r := VerifyReport{Schema: schema}
	var exists bool
	var version string
	// Hand-written: catalog reads.
	err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1), current_setting('server_version_num')",
		schema).Scan(&exists, &version)
	if err != nil {
		return r, fmt.Errorf("verify: %w", mapError(err))
	}
	if !exists {
		r.Findings = append(r.Findings, fmt.Sprintf("schema %s does not exist: no store here", schema))
		return r, nil
	}
	owners, err := untrustedOwners(ctx, pool, schema, trusted)
	if err != nil {
		return r, fmt.Errorf("verify: %w", err)
	}
	for _, o := range owners {
		r.Findings = append(r.Findings, "owner: "+o.String())
	}
	have, err := readCatalog(ctx, pool, schema)
	if err != nil {
		return r, fmt.Errorf("verify: %w", err)
	}
	guard, err := newSchemaGuard(ctx, pool, schema)
	if err != nil {
		return r, fmt.Errorf("verify: %w", err)
	}
	hazards, err := guard.hazards(ctx, pool)
	if err != nil {
		return r, fmt.Errorf("verify: %w", err)
	}
	for _, h := range hazards {
		r.Findings = append(r.Findings, "runs inside writes: "+h)
	}
	r.Findings = append(r.Findings, catalogFindings(have, version[:max(len(version)-4, 0)])...)
	return r, nil
}
