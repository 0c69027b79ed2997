//go:build unix

package tests

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/storetest"
)

// writer is one running writer process as the test sees it.
type writer struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	// +checklocks:mu
	acked []string
	// +checklocks:mu
	inFlight string
	done     chan struct{}
}

func startWriter(t *testing.T, path, prefix, retry string, env ...string) *writer {
	t.Helper()
	cmd, out := startHelper(t, "append", path, append([]string{"SESSIONDB_TEST_PREFIX=" + prefix, "SESSIONDB_TEST_RETRY=" + retry}, env...)...)
	w := &writer{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			verb, key, _ := strings.Cut(sc.Text(), " ")
			w.mu.Lock()
			switch verb {
			case "send":
				w.inFlight = key
			case "ack":
				w.acked = append(w.acked, key)
				w.inFlight = ""
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// waitForAck waits until the writer acknowledged its first message.
func (w *writer) waitForAck(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		w.mu.Lock()
		n := len(w.acked)
		w.mu.Unlock()
		if n > 0 {
			return
		}
	}
	t.Fatal("a writer process acknowledged nothing in 30 s")
}

// kill sends SIGKILL and returns the keys it acknowledged and the one it
// had in flight.
func (w *writer) kill(t *testing.T) (acked []string, inFlight string) {
	t.Helper()
	w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.done
	w.cmd.Wait()
	mustHaveBeenKilled(t, w.cmd)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked, w.inFlight
}

// Writer processes appending with idempotency keys are killed with
// SIGKILL at random, at least 50 times; after each kill every acknowledged
// message is present exactly once (re-sent in-flight keys included) and
// the file verifies.
func TestKillNine(t *testing.T) {
	kills := 60
	if testing.Short() {
		kills = 20
	}
	path := filepath.Join(t.TempDir(), "state.db")
	rng := rand.New(rand.NewPCG(9, 9))
	// The writers pace themselves: every row they write is read back
	// after every kill, and unpaced under -race on a loaded machine they
	// wrote 167,000 rows and the checks took 37 minutes (paced at 2 ms: 32,600 rows, 9 minutes). A kill still
	// lands inside an append most rounds (the log counts re-sends).
	paced := "SESSIONDB_TEST_APPEND_PAUSE=5ms"
	writers := []*writer{startWriter(t, path, "a0", "", paced), startWriter(t, path, "b0", "", paced)}
	names := []string{"a", "b"}
	// Kill only once both have written: the first kill must find a database.
	for _, w := range writers {
		w.waitForAck(t)
	}
	acked := map[string]bool{}
	retried := 0
	for k := range kills {
		time.Sleep(time.Duration(30+rng.IntN(120)) * time.Millisecond)
		i := rng.IntN(len(writers))
		keys, inFlight := writers[i].kill(t)
		for _, key := range keys {
			acked[key] = true
		}
		if inFlight != "" {
			retried++
		}
		writers[i] = startWriter(t, path, fmt.Sprintf("%s%d", names[i], k+1), inFlight, paced)
		checkExactlyOnce(t, path, acked)
		if t.Failed() {
			break
		}
	}
	for _, w := range writers {
		keys, _ := w.kill(t)
		for _, key := range keys {
			acked[key] = true
		}
	}
	checkExactlyOnce(t, path, acked)
	s := openStore(t, path, db.Options{})
	msgs := storetest.WholeSession(t, s.Store, "k") // checks MessageCount against the rows
	t.Logf("%d kills, %d acknowledged messages checked after each, %d in-flight appends re-sent after a kill, %d rows", kills, len(acked), retried, len(msgs))
	if len(acked) < kills {
		t.Errorf("only %d acknowledged writes in %d rounds: the writers barely ran", len(acked), kills)
	}
}

// checkExactlyOnce verifies the file and the acknowledged keys, reading
// the whole session "k" (a writer may still be appending to it).
func checkExactlyOnce(t *testing.T, path string, acked map[string]bool) {
	t.Helper()
	r, err := db.Verify(t.Context(), path)
	if err != nil || r.Health != db.HealthVerified {
		t.Errorf("after a kill: verify = %s %v %v", r.Health, r.Details, err)
	}
	s, err := db.Open(t.Context(), path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, problem := range exactlyOnce(storetest.WholeSession(t, s.Store, "k"), acked) {
		t.Error(problem)
	}
}

// exactlyOnce lists each acknowledged key not present exactly once in
// msgs, and each other key stored more than once.
func exactlyOnce(msgs []db.Message, acked map[string]bool) []string {
	seen := map[string]int{}
	for _, m := range msgs {
		seen[m.IdempotencyKey]++
	}
	var problems []string
	for key := range acked {
		if seen[key] != 1 {
			problems = append(problems, fmt.Sprintf("acknowledged message %s present %d times", key, seen[key]))
		}
	}
	for key, n := range seen {
		if n > 1 && !acked[key] {
			problems = append(problems, fmt.Sprintf("message %s stored %d times", key, n))
		}
	}
	slices.Sort(problems)
	return problems
}

// mustHaveBeenKilled fails the test unless cmd, which has been waited for,
// ended by our SIGKILL: writer processes only stop when killed, so one
// that ended by itself met an error (on its stderr, which the test shows).
func mustHaveBeenKilled(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && !(ws.Signaled() && ws.Signal() == syscall.SIGKILL) {
		t.Errorf("writer process %d ended by itself (%v) instead of being killed: see its error above", cmd.Process.Pid, cmd.ProcessState)
	}
}
