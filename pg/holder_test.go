package pg

import (
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// TestLease_DeadHolderIsReclaimedBeforeTTL: a holder made by NewHolder is
// alive while its store's session is, whatever machine it runs on; once
// that session ends (the process died: its backend terminated, or its
// store closed), another store takes the lease at once instead of waiting
// an hour of TTL. Holders of any other form wait for their TTL.
func TestLease_DeadHolderIsReclaimedBeforeTTL(t *testing.T) {
	ctx := t.Context()
	a := openTestStore(t, Options{})
	b, err := Open(ctx, testDSN(t), Options{Schema: a.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, id := range []string{"s", "closed", "plain"} {
		if _, err := a.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	acquire := func(s *Store, session, holder string) bool {
		t.Helper()
		_, ok, err := s.AcquireTurnLease(ctx, session, holder, time.Hour)
		if err != nil {
			t.Fatalf("AcquireTurnLease(%s, %s): %v", session, holder, err)
		}
		return ok
	}
	ha, err := a.NewHolder(ctx, "gateway:a")
	if err != nil {
		t.Fatal(err)
	}
	hb, err := b.NewHolder(ctx, "gateway-b")
	if err != nil {
		t.Fatal(err)
	}
	if !acquire(a, "s", ha) || !acquire(a, "plain", "worker-1") {
		t.Fatal("the first holders did not get their leases")
	}
	if acquire(b, "s", hb) || acquire(b, "plain", hb) {
		t.Fatal("a live holder's lease was taken")
	}

	// a's process dies: its sessions end, the keeper's among them.
	killer := sideConn(t, a)
	var ended bool
	if err := killer.QueryRow(ctx, "SELECT pg_terminate_backend($1, 5000)", keeperPID(&a.eng.keeper)).Scan(&ended); err != nil || !ended {
		t.Fatalf("terminate the holder's session: %v, %v", ended, err)
	}
	if !acquire(b, "s", hb) {
		t.Error("a dead holder's lease was not reclaimed before its TTL")
	}
	if acquire(b, "plain", hb) {
		t.Error("a holder without a lock to probe was taken for dead")
	}

	// A store that closes releases its holders too.
	c, err := Open(ctx, testDSN(t), Options{Schema: a.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	hc, err := c.NewHolder(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !acquire(c, "closed", hc) || acquire(b, "closed", hb) {
		t.Fatal("the closing store's holder did not hold its lease")
	}
	c.Close()
	// Close sends the server its Terminate and returns; the backend
	// releases the lock as it exits, a moment later (under load, more
	// than the next statement's round trip: seen failing at load 20).
	reclaimed := false
	for deadline := time.Now().Add(5 * time.Second); !reclaimed && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		reclaimed = acquire(b, "closed", hb)
	}
	if !reclaimed {
		t.Error("a closed store's holder kept its lease for 5 s")
	}
}

// keeperPID is the server process of a store's keeper connection.
func keeperPID(k *keeper) uint32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.conn.PgConn().PID()
}
