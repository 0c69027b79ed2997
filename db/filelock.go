package db

import (
	"context"
	"fmt"

	"github.com/sessiondb/sessiondb/internal/flock"
)

// acquireFileLock waits for the cross-process lock at path until ctx is
// done (flock.Acquire); something other than a regular file at path is
// refused with a SideFileError.
func acquireFileLock(ctx context.Context, path string) (*flock.Lock, error) {
	l, err := flock.Acquire(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, sideFileError(err))
	}
	return l, nil
}
