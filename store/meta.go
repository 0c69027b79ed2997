package store

import (
	"context"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// SetMeta stores a store-wide key/value, replacing any previous value.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	if err := rules.CheckID("meta key", key); err != nil {
		return opErr("set meta", "", err)
	}
	if err := rules.CheckText("meta value", value); err != nil {
		return opErr("set meta", "", err)
	}
	return s.write(ctx, "set meta", "", s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		return tx.MetaUpsert(ctx, driver.MetaUpsertParams{Key: key, Value: value, UpdatedAt: now()})
	})
}

// Meta returns the value stored under key, or ErrNotFound.
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.read(ctx, "get meta", "", func(q driver.Executor) error {
		var err error
		v, err = q.MetaGet(ctx, key)
		return err
	})
	return v, err
}
