package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// DefaultLeaseTTL is the lifetime of a lease or lock acquired with ttl 0.
const DefaultLeaseTTL = 300 * time.Second

// turnLeaseSweepAge is how long past its expiry a turn lease row is kept
// before an acquire sweeps it away.
const turnLeaseSweepAge = 24 * time.Hour

// Lease is a held compression lock or turn lease.
type Lease struct {
	// Key is the session id of a compression lock, or the conversation root
	// id of a turn lease.
	Key        string
	Holder     string
	AcquiredAt time.Time
	ExpiresAt  time.Time
}

// Live reports whether the lease has not yet expired at t.
func (l Lease) Live(t time.Time) bool { return l.Holder != "" && t.Before(l.ExpiresAt) }

// leaseTable is one of the two lease tables: the same rules over a
// different key.
type leaseTable struct {
	what   string // "compression lock", "turn lease"
	get    func(ctx context.Context, q driver.Executor, key string) (Lease, error)
	insert func(ctx context.Context, q driver.Executor, l Lease) (int64, error)
	extend func(ctx context.Context, q driver.Executor, key, holder string, expires int64) (int64, error)
	remove func(ctx context.Context, q driver.Executor, key, holder string) (int64, error)
}

var compressionLocks = leaseTable{
	what: "compression lock",
	get: func(ctx context.Context, q driver.Executor, key string) (Lease, error) {
		r, err := q.CompressionLockGet(ctx, key)
		return leaseFromRow(r.SessionID, r.Holder, r.AcquiredAt, r.ExpiresAt), err
	},
	insert: func(ctx context.Context, q driver.Executor, l Lease) (int64, error) {
		return q.CompressionLockInsert(ctx, driver.CompressionLockInsertParams{SessionID: l.Key,
			Holder: l.Holder, AcquiredAt: l.AcquiredAt.UnixMilli(), ExpiresAt: l.ExpiresAt.UnixMilli()})
	},
	extend: func(ctx context.Context, q driver.Executor, key, holder string, expires int64) (int64, error) {
		return q.CompressionLockExtend(ctx, driver.CompressionLockExtendParams{SessionID: key,
			Holder: holder, ExpiresAt: expires})
	},
	remove: func(ctx context.Context, q driver.Executor, key, holder string) (int64, error) {
		return q.CompressionLockDelete(ctx, driver.CompressionLockDeleteParams{SessionID: key, Holder: holder})
	},
}

var turnLeases = leaseTable{
	what: "turn lease",
	get: func(ctx context.Context, q driver.Executor, key string) (Lease, error) {
		r, err := q.TurnLeaseGet(ctx, key)
		return leaseFromRow(r.ConversationID, r.Holder, r.AcquiredAt, r.ExpiresAt), err
	},
	insert: func(ctx context.Context, q driver.Executor, l Lease) (int64, error) {
		return q.TurnLeaseInsert(ctx, driver.TurnLeaseInsertParams{ConversationID: l.Key,
			Holder: l.Holder, AcquiredAt: l.AcquiredAt.UnixMilli(), ExpiresAt: l.ExpiresAt.UnixMilli()})
	},
	extend: func(ctx context.Context, q driver.Executor, key, holder string, expires int64) (int64, error) {
		return q.TurnLeaseExtend(ctx, driver.TurnLeaseExtendParams{ConversationID: key,
			Holder: holder, ExpiresAt: expires})
	},
	remove: func(ctx context.Context, q driver.Executor, key, holder string) (int64, error) {
		return q.TurnLeaseDelete(ctx, driver.TurnLeaseDeleteParams{ConversationID: key, Holder: holder})
	},
}

func leaseFromRow(key, holder string, acquired, expires int64) Lease {
	if holder == "" {
		return Lease{}
	}
	return Lease{Key: key, Holder: holder, AcquiredAt: fromMillis(acquired), ExpiresAt: fromMillis(expires)}
}

// current returns the lease row for key (zero Lease when there is none).
func (t leaseTable) current(ctx context.Context, q driver.Executor, key string) (Lease, error) {
	l, err := t.get(ctx, q, key)
	if errors.Is(err, ErrNotFound) {
		return Lease{}, nil
	}
	return l, err
}

// acquire runs inside a write transaction: the row is read, a stale one
// (expired, or its holder provably dead) is removed by a compare-and-set
// on its holder, and the lease is inserted if the key is free. It returns
// the lease that holds the key afterwards, and whether it is the caller's.
// Acquiring a lease one already holds extends it.
func (t leaseTable) acquire(ctx context.Context, tx driver.Executor, key, holder string, ttl time.Duration) (Lease, bool, error) {
	at := time.UnixMilli(now()).UTC()
	cur, err := t.current(ctx, tx, key)
	if err != nil {
		return Lease{}, false, err
	}
	gone := false
	if cur.Holder != "" && cur.Holder != holder && cur.Live(at) {
		if gone, err = tx.HolderGone(ctx, cur.Holder); err != nil {
			return Lease{}, false, err
		}
	}
	switch {
	case cur.Holder == holder:
		if _, err := t.extend(ctx, tx, key, holder, at.Add(ttl).UnixMilli()); err != nil {
			return Lease{}, false, err
		}
		cur.ExpiresAt = at.Add(ttl)
		return cur, true, nil
	case cur.Holder != "" && cur.Live(at) && !gone:
		return cur, false, nil
	case cur.Holder != "":
		if _, err := t.remove(ctx, tx, key, cur.Holder); err != nil {
			return Lease{}, false, err
		}
	}
	mine := Lease{Key: key, Holder: holder, AcquiredAt: at, ExpiresAt: at.Add(ttl)}
	if _, err := t.insert(ctx, tx, mine); err != nil {
		return Lease{}, false, err
	}
	return mine, true, nil
}

// refresh extends the caller's lease; the holder is the only check, so an
// owner revives its own expired lease. ErrLeaseLost when another holds it.
func (t leaseTable) refresh(ctx context.Context, tx driver.Executor, key, holder string, ttl time.Duration) (Lease, error) {
	n, err := t.extend(ctx, tx, key, holder, now()+ttl.Milliseconds())
	if err != nil {
		return Lease{}, err
	}
	if n == 0 {
		return Lease{}, ErrLeaseLost
	}
	return t.current(ctx, tx, key)
}

// mustHold returns ErrLeaseLost unless holder holds a live lease on key.
func (t leaseTable) mustHold(ctx context.Context, tx driver.Executor, key, holder string) error {
	cur, err := t.current(ctx, tx, key)
	if err != nil {
		return err
	}
	if cur.Holder != holder || !cur.Live(time.Now()) {
		return t.notHeld(key, holder, cur)
	}
	return nil
}

// notHeld explains an ErrLeaseLost: no one holds the lease (it was never
// taken, or was released), someone else does, or the caller's expired.
func (t leaseTable) notHeld(key, holder string, cur Lease) error {
	switch {
	case cur.Holder == "":
		return fmt.Errorf("%w: the %s of %q is not held (acquire it first)", ErrLeaseLost, t.what, key)
	case cur.Holder != holder:
		return fmt.Errorf("%w: the %s of %q is held by %q, not %q", ErrLeaseLost, t.what, key, cur.Holder, holder)
	}
	return fmt.Errorf("%w: the %s of %q held by %q expired at %s", ErrLeaseLost, t.what, key, holder,
		cur.ExpiresAt.UTC().Format(time.RFC3339Nano))
}

// blocks returns ErrLeaseHeld when a live lease on key is held by someone
// other than holder ("" = anyone).
func (t leaseTable) blocks(ctx context.Context, tx driver.Executor, key, holder string) error {
	cur, err := t.current(ctx, tx, key)
	if err != nil {
		return err
	}
	if cur.Live(time.Now()) && cur.Holder != holder {
		return ErrLeaseHeld
	}
	return nil
}

func checkLease(holder string, ttl time.Duration) error {
	if holder == "" {
		return invalid("empty lease holder")
	}
	if ttl < 0 {
		return invalid("negative lease TTL")
	}
	return rules.CheckLabel("lease holder", holder)
}

func leaseTTL(ttl time.Duration) time.Duration {
	if ttl == 0 {
		return DefaultLeaseTTL
	}
	return ttl
}

// holdTurn checks, inside a write, that holder holds the turn lease of
// sessionID's conversation, renewing it when it expired but is still the
// holder's; ErrLeaseLost otherwise.
func holdTurn(ctx context.Context, tx driver.Executor, sessionID, holder string) error {
	root, err := conversationRoot(ctx, tx, sessionID)
	if err != nil {
		return err
	}
	cur, err := turnLeases.current(ctx, tx, root)
	if err != nil {
		return err
	}
	switch {
	case cur.Holder != holder:
		return turnLeases.notHeld(root, holder, cur)
	case !cur.Live(time.Now()):
		_, err := turnLeases.extend(ctx, tx, root, holder, now()+DefaultLeaseTTL.Milliseconds())
		return err
	}
	return nil
}
