package pg

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// Lease contenders as separate processes, each with a holder from
// Store.NewHolder, racing round after round for the compression lock and
// the turn lease of one conversation. Each round must have exactly one
// winner of each; a live winner is never reclaimed, however often the
// others try; a winner SIGKILLed while holding is provably dead, and its
// leases are taken by another process within seconds although their TTL
// is an hour.
const (
	leaseRaceEnv     = "SESSIONDB_PG_LEASE_SCHEMA"
	leaseRaceSession = "conv"
	leaseRaceTTL     = time.Hour
)

// TestLeaseContenderProcess is a contender when run by
// TestLease_ProcessesRaceAndKilledHolderIsReclaimed (and nothing
// otherwise). It reads commands on stdin and answers each on stdout:
//
//	try R     → "try R lock=0|1 turn=0|1" (both acquired with a 1 h TTL)
//	release R → "released R"
func TestLeaseContenderProcess(t *testing.T) {
	schema := os.Getenv(leaseRaceEnv)
	if schema == "" {
		return
	}
	fail := func(what string, err error) {
		fmt.Fprintln(os.Stderr, what+":", err)
		os.Exit(2)
	}
	ctx := context.Background()
	s, err := Open(ctx, testDSN(t), Options{Schema: schema})
	if err != nil {
		fail("open", err)
	}
	holder, err := s.NewHolder(ctx, fmt.Sprintf("contender-%d", os.Getpid()))
	if err != nil {
		fail("new holder", err)
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, round, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "try":
			_, lock, err := s.AcquireCompressionLock(ctx, leaseRaceSession, holder, leaseRaceTTL)
			if err != nil {
				fail("acquire compression lock", err)
			}
			_, turn, err := s.AcquireTurnLease(ctx, leaseRaceSession, holder, leaseRaceTTL)
			if err != nil {
				fail("acquire turn lease", err)
			}
			fmt.Printf("try %s lock=%d turn=%d\n", round, b2i(lock), b2i(turn))
		case "release":
			if _, err := s.ReleaseCompressionLock(ctx, leaseRaceSession, holder); err != nil {
				fail("release compression lock", err)
			}
			if _, err := s.ReleaseTurnLease(ctx, leaseRaceSession, holder); err != nil {
				fail("release turn lease", err)
			}
			fmt.Printf("released %s\n", round)
		}
	}
	s.Close()
	os.Exit(0)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// contender is a running contender process, as the test sees it.
type contender struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // its answers; closed when its output ends
}

func startContender(t *testing.T, schema string) *contender {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeaseContenderProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), leaseRaceEnv+"="+schema)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &contender{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		r := bufio.NewScanner(stdout)
		for r.Scan() {
			c.lines <- r.Text()
		}
	}()
	t.Cleanup(func() { c.kill() })
	if got := c.await(t, "ready"); got != "ready" {
		t.Fatalf("contender did not start: %q", got)
	}
	return c
}

// await returns the contender's next line starting with prefix (skipping
// the test binary's own output).
func (c *contender) await(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("contender %d ended while awaiting %q: %v", c.cmd.Process.Pid, prefix, c.cmd.Wait())
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-timeout:
			t.Fatalf("contender %d: no %q in 2 minutes", c.cmd.Process.Pid, prefix)
		}
	}
}

func (c *contender) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// kill SIGKILLs the process and reaps it.
func (c *contender) kill() {
	if c.cmd.ProcessState == nil {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		for range c.lines {
		}
		_ = c.cmd.Wait()
	}
}

// tryAll has every contender try at once and returns who got the lock and
// who got the turn lease.
func tryAll(t *testing.T, cs []*contender, round string) (lock, turn []int) {
	t.Helper()
	for _, c := range cs {
		c.send(t, "try "+round)
	}
	for i, c := range cs {
		var l, tu int
		line := c.await(t, "try "+round+" ")
		if _, err := fmt.Sscanf(strings.TrimPrefix(line, "try "+round+" "), "lock=%d turn=%d", &l, &tu); err != nil {
			t.Fatalf("contender %d: %q: %v", i, line, err)
		}
		if l == 1 {
			lock = append(lock, i)
		}
		if tu == 1 {
			turn = append(turn, i)
		}
	}
	return lock, turn
}

func TestLease_ProcessesRaceAndKilledHolderIsReclaimed(t *testing.T) {
	const contenders, rounds = 5, 24
	s := openTestStore(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: leaseRaceSession, Source: "test"}); err != nil {
		t.Fatal(err)
	}
	cs := make([]*contender, contenders)
	for i := range cs {
		cs[i] = startContender(t, s.Schema())
	}

	// one fails unless exactly one contender won, and returns it.
	one := func(round, what string, winners []int) int {
		t.Helper()
		if len(winners) != 1 {
			t.Fatalf("round %s: %s won by contenders %v, want exactly one", round, what, winners)
		}
		return winners[0]
	}
	var kills int
	var reclaimTimes []time.Duration
	for r := range rounds {
		round := fmt.Sprint(r)
		lock, turn := tryAll(t, cs, round)
		winners := map[int]bool{one(round, "the compression lock", lock): true, one(round, "the turn lease", turn): true}

		// Live holders keep their leases: everyone tries again, the
		// holders re-acquire (extend) their own and no one else gets one.
		lock2, turn2 := tryAll(t, cs, round+"-again")
		if !cmp2(lock2, lock) || !cmp2(turn2, turn) {
			t.Fatalf("round %s: live holders' leases moved: lock %v → %v, turn %v → %v", round, lock, lock2, turn, turn2)
		}

		if r%2 == 0 {
			for i := range winners {
				cs[i].send(t, "release "+round)
				cs[i].await(t, "released "+round)
			}
			continue
		}
		// The winners die holding. The others take both leases over well
		// before the hour of TTL: as soon as the server has ended the dead
		// processes' sessions.
		var alive []*contender
		for i, c := range cs {
			if winners[i] {
				c.kill()
				kills++
			} else {
				alive = append(alive, c)
			}
		}
		killed := time.Now()
		for a := 0; ; a++ {
			lock, turn := tryAll(t, alive, fmt.Sprintf("%s-reclaim-%d", round, a))
			if len(lock) > 1 || len(turn) > 1 {
				t.Fatalf("round %s reclaim %d: lock won by %v, turn by %v: more than one winner", round, a, lock, turn)
			}
			if len(lock) == 1 && len(turn) == 1 {
				reclaimTimes = append(reclaimTimes, time.Since(killed))
				for _, i := range []int{lock[0], turn[0]} {
					alive[i].send(t, "release "+round)
					alive[i].await(t, "released "+round)
				}
				break
			}
			if since := time.Since(killed); since > time.Minute {
				t.Fatalf("round %s: the dead holders' leases (TTL %v) were not reclaimed within %v", round, leaseRaceTTL, since)
			}
			time.Sleep(20 * time.Millisecond)
		}
		for i := range cs {
			if winners[i] {
				cs[i] = startContender(t, s.Schema())
			}
		}
	}
	slowest := time.Duration(0)
	for _, d := range reclaimTimes {
		slowest = max(slowest, d)
	}
	t.Logf("%d contender processes, %d rounds: exactly one winner of the lock and of the turn lease each round; "+
		"%d holders SIGKILLed holding 1 h leases, reclaimed in at most %v", contenders, rounds, kills, slowest)
}

func cmp2(a, b []int) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
