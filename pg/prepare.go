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
	return prepare(ctx, pool, nil)
}

func prepare(ctx context.Context, pool *pgxpool.Pool, trusted []string) (int, error) {
	if err := CheckLocale(ctx, pool); err != nil {
		return 0, err
	}
	return migrate(ctx, pool, trusted)
}
