package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
)

// TestLeases_EarlyReclaimOnlyWithProof: a live lease is reclaimed before
// its TTL only when its holder names a local process that is provably dead
// (or whose pid was recycled) — never this process, another host, an
// unstructured holder.
func TestLeases_EarlyReclaimOnlyWithProof(t *testing.T) {
	ctx := t.Context()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` binary:", err)
	}
	deadPID := dead.Process.Pid
	alive := exec.Command("sleep", "30")
	if err := alive.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alive.Process.Kill(); alive.Wait() })
	alivePID := alive.Process.Pid
	aliveStart, hasStart := processStart(alivePID)

	h := func(host string, pid int, start string) string {
		s := "host=" + host + ":pid=" + strconv.Itoa(pid)
		if start != "" {
			s += ":start=" + start
		}
		return s + ":nonce=abc"
	}
	me := hostName()
	cases := []struct {
		name      string
		holder    string
		reclaimed bool
	}{
		{"dead pid", h(me, deadPID, ""), true},
		{"dead pid, python form", "pid=" + strconv.Itoa(deadPID) + ":tid=1:agent=x:nonce=n", true},
		{"live pid", h(me, alivePID, ""), false},
		{"this process", h(me, os.Getpid(), "1"), false},
		{"this process, from NewHolder", NewHolder("me"), false},
		{"other host, dead pid", h("elsewhere", deadPID, ""), false},
		{"unstructured", "worker-7", false},
		{"garbage pid", "host=" + me + ":pid=abc:nonce=x", false},
		{"duplicate field", h(me, deadPID, "") + ":pid=1", false},
	}
	if hasStart {
		cases = append(cases,
			struct {
				name      string
				holder    string
				reclaimed bool
			}{"recycled pid (start differs)", h(me, alivePID, strconv.FormatUint(aliveStart+1, 10)), true},
			struct {
				name      string
				holder    string
				reclaimed bool
			}{"live pid, same start", h(me, alivePID, strconv.FormatUint(aliveStart, 10)), false})
	}
	s := openTestStore(t, Options{})
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("s%d", i)
			newTestSession(t, s, id)
			if _, got, err := s.AcquireCompressionLock(ctx, id, c.holder, time.Hour); !got || err != nil {
				t.Fatal(got, err)
			}
			l, got, err := s.AcquireCompressionLock(ctx, id, "waiter", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.reclaimed {
				t.Errorf("reclaimed = %v, want %v (holder now %q)", got, c.reclaimed, l.Holder)
			}
		})
	}
}

func TestTurnLease_SweepsLongExpiredRows(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	newTestSession(t, s, "s1")
	old := now() - (25 * time.Hour).Milliseconds()
	err := s.write(ctx, "seed", "", time.Second, func(ctx context.Context, tx gen.DBTX) error {
		_, err := queries.TurnLeaseInsert(ctx, tx, gen.TurnLeaseInsertParams{ConversationID: "gone",
			Holder: "crashed", AcquiredAt: old, ExpiresAt: old + 1000})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AcquireTurnLease(ctx, "s1", "a", 0); err != nil {
		t.Fatal(err)
	}
	err = s.read(ctx, "check", "", func(q gen.DBTX) error {
		_, err := queries.TurnLeaseGet(ctx, q, "gone")
		if err == nil {
			t.Errorf("a lease expired 25 h ago was not swept")
		} else if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLeases_ProbeErrorNeverReclaims: when the liveness probe cannot tell
// (an error, or a platform without one), a holder naming a dead pid keeps
// its lease until the TTL.
func TestLeases_ProbeErrorNeverReclaims(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	holder := "host=" + hostName() + ":pid=" + strconv.Itoa(dead.Process.Pid) + ":nonce=x"
	if !holderIsDead(holder) {
		t.Fatalf("the probe should prove pid %d dead", dead.Process.Pid)
	}
	probeProcess = func(int) probeResult { return probeUnknown }
	t.Cleanup(func() { probeProcess = processAlive })
	if holderIsDead(holder) {
		t.Errorf("a probe that cannot tell reclaimed the lease")
	}
}
