package store

import (
	"context"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// AcquireCompressionLock takes the session's compression lock for holder
// (see NewHolder) for ttl (0 = DefaultLeaseTTL). It returns the lock as it
// stands afterwards and whether holder got it; a lock held by someone else
// is reclaimed only when it has expired or its holder process is provably
// dead. Acquiring a lock one already holds extends it. While the session's
// compression failure cooldown runs (CompressionFailed) the lock is refused
// with ErrCoolingDown, so a failing compression is not retried in a loop.
func (s *Store) AcquireCompressionLock(ctx context.Context, sessionID, holder string, ttl time.Duration) (Lease, bool, error) {
	const op = "acquire compression lock"
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, ttl)); err != nil {
		return Lease{}, false, opErr(op, sessionID, err)
	}
	var l Lease
	var got bool
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) (err error) {
		l, got = Lease{}, false // fresh on every (re)play
		if err := sessionMustExist(ctx, tx, sessionID); err != nil {
			return err
		}
		if err := compressionCooling(ctx, tx, sessionID); err != nil {
			return err
		}
		l, got, err = compressionLocks.acquire(ctx, tx, sessionID, holder, leaseTTL(ttl))
		return err
	})
	return l, got, err
}

// RefreshCompressionLock extends holder's lock by ttl (0 = DefaultLeaseTTL).
// Only the holder is checked, so an owner may revive its own expired lock;
// ErrLeaseLost when another holder has it or it is gone.
func (s *Store) RefreshCompressionLock(ctx context.Context, sessionID, holder string, ttl time.Duration) (Lease, error) {
	const op = "refresh compression lock"
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, ttl)); err != nil {
		return Lease{}, opErr(op, sessionID, err)
	}
	var l Lease
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) (err error) {
		l, err = compressionLocks.refresh(ctx, tx, sessionID, holder, leaseTTL(ttl))
		return err
	})
	return l, err
}

// ReleaseCompressionLock gives up holder's lock. It reports whether there
// was one to release; releasing a lock one does not hold changes nothing.
func (s *Store) ReleaseCompressionLock(ctx context.Context, sessionID, holder string) (bool, error) {
	return s.release(ctx, "release compression lock", compressionLocks, sessionID, holder, false)
}

// CompressionLock returns the session's compression lock row (the zero
// Lease when there is none); Lease.Live tells whether it still holds.
func (s *Store) CompressionLock(ctx context.Context, sessionID string) (Lease, error) {
	var l Lease
	err := s.read(ctx, "get compression lock", sessionID, func(q driver.Executor) (err error) {
		l, err = compressionLocks.current(ctx, q, sessionID)
		return err
	})
	return l, err
}

// AcquireTurnLease takes the turn lease of the conversation sessionID
// belongs to — the lease is keyed by the lineage root, resolved inside the
// transaction, so a compression continuation shares its ancestors' lease.
// Otherwise as AcquireCompressionLock. It also sweeps leases that expired
// more than a day ago.
func (s *Store) AcquireTurnLease(ctx context.Context, sessionID, holder string, ttl time.Duration) (Lease, bool, error) {
	const op = "acquire turn lease"
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, ttl)); err != nil {
		return Lease{}, false, opErr(op, sessionID, err)
	}
	var l Lease
	var got bool
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		l, got = Lease{}, false // fresh on every (re)play
		root, err := conversationRoot(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if _, err := tx.TurnLeaseSweep(ctx, now()-turnLeaseSweepAge.Milliseconds()); err != nil {
			return err
		}
		prev, err := turnLeases.current(ctx, tx, root)
		if err != nil {
			return err
		}
		if l, got, err = turnLeases.acquire(ctx, tx, root, holder, leaseTTL(ttl)); err != nil || !got || prev.Holder == holder {
			return err
		}
		return admitTurn(ctx, tx, root, holder) // a new turn: the last one's result is not this one's (PickerStatuses)
	})
	return l, got, err
}

// AwaitTurnLease polls AcquireTurnLease every poll (0 = 1 s) until holder
// gets the lease or ctx ends.
func (s *Store) AwaitTurnLease(ctx context.Context, sessionID, holder string, ttl, poll time.Duration) (Lease, error) {
	if poll <= 0 {
		poll = time.Second
	}
	for {
		l, got, err := s.AcquireTurnLease(ctx, sessionID, holder, ttl)
		if err != nil || got {
			return l, err
		}
		select {
		case <-ctx.Done():
			return l, opErr("await turn lease", sessionID, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// RefreshTurnLease extends holder's turn lease; see RefreshCompressionLock.
func (s *Store) RefreshTurnLease(ctx context.Context, sessionID, holder string, ttl time.Duration) (Lease, error) {
	const op = "refresh turn lease"
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, ttl)); err != nil {
		return Lease{}, opErr(op, sessionID, err)
	}
	var l Lease
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		l = Lease{} // fresh on every (re)play
		root, err := conversationRoot(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		l, err = turnLeases.refresh(ctx, tx, root, holder, leaseTTL(ttl))
		return err
	})
	return l, err
}

// ReleaseTurnLease gives up holder's turn lease; see ReleaseCompressionLock.
func (s *Store) ReleaseTurnLease(ctx context.Context, sessionID, holder string) (bool, error) {
	return s.release(ctx, "release turn lease", turnLeases, sessionID, holder, true)
}

// TurnLease returns the turn lease of sessionID's conversation (the zero
// Lease when there is none).
func (s *Store) TurnLease(ctx context.Context, sessionID string) (Lease, error) {
	var l Lease
	err := s.snapshot(ctx, "get turn lease", sessionID, func(q driver.Executor) error {
		root, err := conversationRoot(ctx, q, sessionID)
		if err != nil {
			return err
		}
		l, err = turnLeases.current(ctx, q, root)
		return err
	})
	return l, err
}

func (s *Store) release(ctx context.Context, op string, t leaseTable, sessionID, holder string, byRoot bool) (bool, error) {
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, 0)); err != nil {
		return false, opErr(op, sessionID, err)
	}
	var released bool
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		key := sessionID
		if byRoot {
			root, err := conversationRoot(ctx, tx, sessionID)
			if err != nil {
				return err
			}
			key = root
		}
		n, err := t.remove(ctx, tx, key, holder)
		released = n == 1
		return err
	})
	return released, err
}

// conversationRoot returns the lineage root of sessionID's conversation
// (itself when it is not a compression continuation); ErrNotFound when
// there is no such session.
func conversationRoot(ctx context.Context, q driver.Executor, sessionID string) (string, error) {
	return q.SessionConversationRoot(ctx, sessionID)
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
