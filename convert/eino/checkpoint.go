package eino

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/sessiondb/sessiondb/store"
)

// KeyValues is the part of a store CheckPoints needs: *db.Store,
// *pg.Store and *store.Store all have it.
type KeyValues interface {
	Meta(ctx context.Context, key string) (string, error)
	SetMeta(ctx context.Context, key, value string) error
}

// CheckPoints is a compose.CheckPointStore (eino's graph checkpoints) in a
// store's key/values, under the key "eino/checkpoint/" + the checkpoint's
// id (base64, as the values are text). Pass it to compose.WithCheckPointStore;
// a checkpoint a graph wrote in one process resumes in another that opens
// the same store. Each Set is one durable write; a later Set of the same
// id replaces it.
type CheckPoints struct {
	Store KeyValues
}

// checkPointKey is the store key of a checkpoint id.
func checkPointKey(id string) string { return "eino/checkpoint/" + id }

// Get returns the checkpoint saved under id, and whether there is one.
func (c CheckPoints) Get(ctx context.Context, id string) ([]byte, bool, error) {
	v, err := c.Store.Meta(ctx, checkPointKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, false, fmt.Errorf("eino checkpoint %q: not written by CheckPoints: %w", id, err)
	}
	return b, true, nil
}

// Set saves checkPoint under id.
func (c CheckPoints) Set(ctx context.Context, id string, checkPoint []byte) error {
	return c.Store.SetMeta(ctx, checkPointKey(id), base64.StdEncoding.EncodeToString(checkPoint))
}
