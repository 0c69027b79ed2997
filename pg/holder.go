package pg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A lease holder on this engine may run on any machine, so /proc cannot
// prove it dead. Proof comes from the server instead: a holder made by
// Store.NewHolder keeps a session-level advisory lock on a connection of
// its own for as long as its store is open. When a process dies its
// sessions end and the server releases their locks, so a holder whose
// lock can be taken is provably gone, and its lease may be reclaimed
// before the TTL. Every other holder string waits for its TTL.
//
// Behind a transaction-pooling proxy (PgBouncer, pool_mode=transaction)
// a session lock would stay on a server connection the proxy hands to
// other clients, where a probe could take it again (advisory locks are
// reentrant within a session) and find a live holder gone. There the
// keeper holds a transaction open instead and takes each holder's lock
// as a transaction-level lock (pg_advisory_xact_lock): the proxy keeps
// the server connection for that transaction alone, and when the keeper
// closes or its process dies, the proxy closes the server connection,
// which ends the transaction and its locks. A server or proxy setting
// that ends idle transactions (idle_in_transaction_session_timeout,
// PgBouncer's idle_transaction_timeout) would end them too, and the
// holders would look gone: leave those off for the store's role.

// holderField marks a holder string whose liveness is an advisory lock.
const holderField = "pgsession"

// keeper is the connection that holds the advisory locks of the holders a
// store made. It is opened beside the pool, so it never goes back to it
// (a pooled connection could be reset, or closed while idle).
type keeper struct {
	mu sync.Mutex
	// +checklocks:mu
	conn *pgx.Conn // nil until the first holder
}

// NewHolder returns a lease holder string for this process,
//
//	pgsession=3f9a1c0b7d2e5a61:agent=compressor
//
// whose death every store on the database can prove: its advisory lock
// is held until this store is closed or the process ends (see above).
// agent is optional; ':' and '=' in it are replaced with '_'.
func (s *Store) NewHolder(ctx context.Context, agent string) (string, error) {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	id := hex.EncodeToString(nonce[:])
	holder := holderField + "=" + id
	if agent != "" {
		holder += ":agent=" + strings.NewReplacer(":", "_", "=", "_").Replace(agent)
	}
	k := &s.eng.keeper
	k.mu.Lock()
	defer k.mu.Unlock()
	if s.eng.closed.Load() {
		return "", fmt.Errorf("new holder: %w", driver.ErrClosed)
	}
	if k.conn == nil || k.conn.IsClosed() {
		conn, err := connectAside(ctx, s.eng.pool)
		if err != nil {
			return "", fmt.Errorf("new holder: connect: %w", err)
		}
		if poolModeOf(s.eng.pool.Config()) == poolTransaction {
			if err := keepHolders(ctx, conn); err != nil {
				conn.Close(context.WithoutCancel(ctx))
				return "", fmt.Errorf("new holder: %w", err)
			}
		}
		k.conn = conn
	}
	if poolModeOf(s.eng.pool.Config()) == poolTransaction {
		// In the transaction keepHolders began, in a savepoint: a failed
		// lock must not abort that transaction, which would release every
		// other holder's lock with it.
		if err := holdInKeeperTx(ctx, k.conn, holderKey(id)); err != nil {
			return "", fmt.Errorf("new holder: take its lock: %w", err)
		}
		return holder, nil
	}
	// Hand-written, as in HolderGone: advisory locks are no query of the
	// store's schema.
	if _, err := k.conn.Exec(ctx, "SELECT pg_advisory_lock($1)", holderKey(id)); err != nil {
		return "", fmt.Errorf("new holder: take its lock: %w", err)
	}
	return holder, nil
}

// close ends the keeper's session, releasing every holder's lock. The
// locks are released by a statement first: closing the connection alone
// only asks the server to end the session, and a store elsewhere that
// probes a holder just after Close returns would still find it alive.
func (k *keeper) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Hand-written, as in NewHolder: advisory locks are no query of the
		// store's schema.
		_, _ = k.conn.Exec(ctx, "SELECT pg_advisory_unlock_all()")
		_ = k.conn.Close(ctx)
		k.conn = nil
	}
}

// holderKey is the advisory lock of one holder: a hash of its nonce, so
// holders of every store in the database share one key space (a
// collision only makes a dead holder look alive, which waits for TTL).
func holderKey(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte("sessiondb holder\x00" + id))
	return int64(h.Sum64())
}

// holderID is the nonce of a holder made by NewHolder, or "".
func holderID(holder string) string {
	for field := range strings.SplitSeq(holder, ":") {
		if v, ok := strings.CutPrefix(field, holderField+"="); ok && len(v) == 16 {
			if _, err := hex.DecodeString(v); err == nil {
				return v
			}
		}
	}
	return ""
}

// HolderGone is true for a holder made by NewHolder whose advisory lock
// no session holds: its store closed or its process died. The probe takes
// the lock for the rest of the transaction only (the server drops it at
// COMMIT or ROLLBACK), so it never keeps a holder's key. Any other holder
// is not provably gone.
func (e pgExecutor) HolderGone(ctx context.Context, holder string) (bool, error) {
	id := holderID(holder)
	if id == "" {
		return false, nil
	}
	var free bool
	err := e.db.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", holderKey(id)).Scan(&free)
	return free, mapError(err)
}
