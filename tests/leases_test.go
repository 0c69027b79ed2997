package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// TestLeases_OneWinnerAmongProcesses: 4 OS processes race, at the same
// instant, for one session's compression lock and its conversation's turn
// lease (through a continuation, so the lease key is resolved inside each
// transaction). Exactly one process wins each, several rounds running.
func TestLeases_OneWinnerAmongProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "root", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	h := db.NewHolder("compressor")
	if _, _, err := s.AcquireCompressionLock(ctx, "root", h, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishCompressionChild(ctx, "root", db.Continuation{Holder: h, Child: db.NewSession{ID: "cont"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseCompressionLock(ctx, "root", h); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		start := time.Now().Add(500 * time.Millisecond).Format(time.RFC3339Nano)
		barrier := t.TempDir()
		outs := make([]*strings.Builder, 4)
		var procs []func() error
		for i := range outs {
			outs[i] = &strings.Builder{}
			cmd := helper(t, "lease", path, "SESSIONDB_TEST_START="+start,
				fmt.Sprintf("SESSIONDB_TEST_ROUND=%d", round), "SESSIONDB_TEST_BARRIER="+barrier, fmt.Sprintf("SESSIONDB_TEST_N=%d", len(outs)))
			cmd.Stdout, cmd.Stderr = outs[i], os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			procs = append(procs, cmd.Wait)
		}
		for i, wait := range procs {
			if err := wait(); err != nil {
				t.Fatalf("round %d: helper %d: %v", round, i, err)
			}
		}
		lockWins, leaseWins := 0, 0
		for _, out := range outs {
			lockWins += strings.Count(out.String(), "lock won")
			leaseWins += strings.Count(out.String(), "lease won")
		}
		if lockWins != 1 || leaseWins != 1 {
			t.Errorf("round %d: %d processes won the compression lock and %d the turn lease; want exactly 1 each", round, lockWins, leaseWins)
		}
	}
}

// raceForLeases is the body of a lease racer: at the agreed instant it
// tries the compression lock of "root" and the turn lease of "cont" (whose
// conversation root is "root"), printing what it won. Holders name this
// live process, so no racer may reclaim another's lease.
func raceForLeases(ctx context.Context, path string) int {
	s, err := db.Open(ctx, path, db.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer s.Close()
	if at, err := time.Parse(time.RFC3339Nano, os.Getenv("SESSIONDB_TEST_START")); err == nil {
		time.Sleep(time.Until(at))
	}
	holder := db.NewHolder("racer-" + os.Getenv("SESSIONDB_TEST_ROUND"))
	_, got, err := s.AcquireCompressionLock(ctx, "root", holder, time.Minute)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock:", err)
		return 1
	}
	if got {
		fmt.Println("lock won")
	}
	_, gotLease, err := s.AcquireTurnLease(ctx, "cont", holder, time.Minute)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lease:", err)
		return 1
	}
	if gotLease {
		fmt.Println("lease won")
	}
	// Hold until every racer has tried (each leaves a file in the barrier
	// directory), then hand the leases back for the next round.
	barrier := os.Getenv("SESSIONDB_TEST_BARRIER")
	if err := os.WriteFile(filepath.Join(barrier, fmt.Sprint(os.Getpid())), nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "barrier:", err)
		return 1
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if entries, _ := os.ReadDir(barrier); fmt.Sprint(len(entries)) == os.Getenv("SESSIONDB_TEST_N") {
			break
		}
	}
	if got {
		if _, err := s.ReleaseCompressionLock(ctx, "root", holder); err != nil {
			fmt.Fprintln(os.Stderr, "release lock:", err)
			return 1
		}
	}
	if gotLease {
		if _, err := s.ReleaseTurnLease(ctx, "cont", holder); err != nil {
			fmt.Fprintln(os.Stderr, "release lease:", err)
			return 1
		}
	}
	return 0
}
