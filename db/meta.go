package db

import (
	"context"

	"github.com/sessiondb/sessiondb/db/gen"
)

// SetMeta stores a store-wide key/value, replacing any previous value.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	if err := checkID("meta key", key); err != nil {
		return opErr("set meta", "", err)
	}
	if err := checkText("meta value", value); err != nil {
		return opErr("set meta", "", err)
	}
	return s.write(ctx, "set meta", "", s.opts.WritePatience, func(ctx context.Context, tx gen.DBTX) error {
		return queries.MetaUpsert(ctx, tx, gen.MetaUpsertParams{Key: key, Value: value, UpdatedAt: now()})
	})
}

// Meta returns the value stored under key, or ErrNotFound.
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.read(ctx, "get meta", "", func(q gen.DBTX) error {
		var err error
		v, err = queries.MetaGet(ctx, q, key)
		return err
	})
	return v, err
}
