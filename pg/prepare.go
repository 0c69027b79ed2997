package pg

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Prepare readies a pool's store for use, as an open must: it refuses a
// database whose locale would blind search (CheckLocale), before creating
// anything, then creates and migrates the schema (Migrate). It returns how
// many migrations it applied.
func Prepare(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	_, applied, err := prepare(ctx, pool, nil)
	return applied, err
}

func prepare(ctx context.Context, pool *pgxpool.Pool, trusted []string) (Migration, int, error) {
	if err := CheckLocale(ctx, pool); err != nil {
		return Migration{}, 0, err
	}
	return migrate(ctx, pool, trusted)
}
