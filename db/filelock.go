package db

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"
)

// fileLock is a cross-process exclusive lock on a small side file. It
// serialises what SQLite's own locks cannot: the journal-mode switch and
// goose's migrations, which on SQLite race (both openers see version 0 and
// the second fails with "table already exists").
type fileLock struct{ f *os.File }

// acquireFileLock waits for the lock at path until ctx is done. The lock
// dies with the process, so a crashed holder never wedges later opens.
func acquireFileLock(ctx context.Context, path string) (*fileLock, error) {
	for {
		f, locked, err := tryLockFile(path)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if locked {
			return &fileLock{f: f}, nil
		}
		t := time.NewTimer(time.Duration(5+rand.IntN(20)) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
}

func (l *fileLock) release() error {
	unlockFile(l.f)
	return l.f.Close()
}
