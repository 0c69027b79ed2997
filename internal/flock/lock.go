// Package flock holds the cross-process locks sessiondb takes on files:
// the exclusive lock on a small side file that serialises opens and
// repairs, the shared-memory lock that proves no connection has a WAL
// database open, and the reading of /proc/locks that names who holds
// SQLite's write-class locks when a wait runs out.
package flock

import (
	"context"
	"math/rand/v2"
	"os"
	"time"
)

// Lock is a cross-process exclusive lock on a small side file. It
// serialises what SQLite's own locks cannot: the journal-mode switch and
// goose's migrations, which on SQLite race (both openers see version 0 and
// the second fails with "table already exists").
type Lock struct{ f *os.File }

// Acquire waits for the lock at path until ctx is done. The lock dies
// with the process, so a crashed holder never wedges later opens. Its
// errors are returned unwrapped (the caller names the lock); a file that
// is not regular at path is refused with a sidefile.NotRegularError.
func Acquire(ctx context.Context, path string) (*Lock, error) {
	for {
		f, locked, err := tryLock(path)
		if err != nil {
			return nil, err
		}
		if locked {
			return &Lock{f: f}, nil
		}
		t := time.NewTimer(time.Duration(5+rand.IntN(20)) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// File is the lock's side file, open while the lock is held (for its
// mode and owner; never close it).
func (l *Lock) File() *os.File { return l.f }

// Release drops the lock.
func (l *Lock) Release() error {
	unlock(l.f)
	return l.f.Close()
}
