//go:build unix

package tests

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/storetest"
)

var (
	long    = flag.Bool("long", false, "run the torture suite for -long.for instead of a few seconds")
	longFor = flag.Duration("long.for", 2*time.Hour, "how long -long runs the torture suite")
)

// TestTorture: 4 writer processes × 8 goroutines append with idempotency
// keys to 4 shared sessions while readers read, and one process at a time
// is SIGKILLed and restarted (re-sending what it had in flight), and a
// compressor compacts the sessions under its lock. Every acknowledged
// message is present exactly once (compacted, or carried over with its
// key), each session's counter equals its active rows, and the file
// verifies. A few seconds by default; hours
// with -long.
func TestTorture(t *testing.T) {
	run := 6 * time.Second
	if *long {
		run = *longFor
	}
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	ctx := t.Context()
	for i := range tortureSessions {
		if _, err := s.CreateSession(ctx, db.NewSession{ID: fmt.Sprintf("t%d", i), Source: "torture"}); err != nil {
			t.Fatal(err)
		}
	}
	// Readers: the whole time, every session's conversation and a search.
	var reads atomic.Int64
	readCtx, stopReading := context.WithCancel(ctx)
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Go(func() {
			for n := 0; readCtx.Err() == nil; n++ {
				id := fmt.Sprintf("t%d", (n+r)%tortureSessions)
				if _, err := s.Conversation(readCtx, id, db.ConversationOptions{}); err != nil && readCtx.Err() == nil {
					t.Errorf("reader: %v", err)
					return
				}
				reads.Add(1)
			}
		})
	}

	// A compressor, the whole time: it compacts a random session under its
	// compression lock while the appends go on (rows above its watermark
	// are carried over, their keys with them).
	var compactions atomic.Int64
	readers.Go(func() {
		holder := db.NewHolder("torture-compressor")
		for n := 0; readCtx.Err() == nil; n++ {
			id := fmt.Sprintf("t%d", n%tortureSessions)
			if _, got, err := s.AcquireCompressionLock(readCtx, id, holder, time.Minute); err != nil || !got {
				if readCtx.Err() == nil {
					t.Errorf("compressor lock: %v %v", got, err)
				}
				return
			}
			w, err := s.ActiveWatermark(readCtx, id)
			if err == nil {
				_, err = s.CompactSession(readCtx, id, db.Compaction{Holder: holder, Watermark: w,
					Messages: []db.NewMessage{{Role: db.RoleAssistant, Content: fmt.Sprintf("summary %d", n), Summary: true}}})
			}
			if err != nil && readCtx.Err() == nil {
				t.Errorf("compact %s: %v", id, err)
				return
			}
			if err == nil {
				compactions.Add(1)
			}
			s.ReleaseCompressionLock(context.Background(), id, holder)
			select {
			case <-readCtx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	})

	rng := rand.New(rand.NewPCG(4, 8))
	procs := make([]*tortureProc, tortureProcs)
	for p := range procs {
		procs[p] = startTortureProc(t, path, fmt.Sprintf("p%dr0", p), nil)
	}
	for _, p := range procs {
		p.waitForAck(t)
	}
	acked := map[string]bool{}
	var ackOrder []string // in the order each process acknowledged them
	var lastBeforeKill []string
	kills, resent := 0, 0
	for deadline := time.Now().Add(run); time.Now().Before(deadline) && !t.Failed(); {
		time.Sleep(time.Duration(150+rng.IntN(350)) * time.Millisecond)
		i := rng.IntN(len(procs))
		keys, inFlight := procs[i].kill(t)
		for _, k := range keys {
			acked[k] = true
		}
		ackOrder = append(ackOrder, keys...)
		lastBeforeKill = append(lastBeforeKill, keys[max(0, len(keys)-10):]...)
		kills++
		resent += len(inFlight)
		procs[i] = startTortureProc(t, path, fmt.Sprintf("p%dr%d", i, kills), inFlight)
		procs[i].waitForAck(t)
	}
	for _, p := range procs {
		keys, _ := p.kill(t)
		for _, k := range keys {
			acked[k] = true
		}
		ackOrder = append(ackOrder, keys...)
	}
	stopReading()
	readers.Wait()

	if r, err := db.Verify(ctx, path); err != nil || r.Health != db.HealthVerified {
		t.Errorf("verify: %s %v %v", r.Health, r.Details, err)
	}
	seen := map[string]int{}
	rows := 0
	for i := range tortureSessions {
		id := fmt.Sprintf("t%d", i)
		msgs := storetest.WholeSession(t, s.Store, id) // checks the counter against the active rows
		for _, m := range msgs {
			if m.Summary {
				continue
			}
			if !strings.HasPrefix(m.IdempotencyKey, id+"/") {
				t.Errorf("message %q landed in session %s", m.IdempotencyKey, id)
			}
			seen[m.IdempotencyKey]++
		}
		rows += len(msgs)
	}
	for k := range acked {
		if seen[k] != 1 {
			t.Errorf("acknowledged %s present %d times", k, seen[k])
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s stored %d times", k, n)
		}
	}
	searchable := wantSearchable(t, s, ackOrder, lastBeforeKill)
	t.Logf("%v: %d processes × %d goroutines, %d kills, %d acknowledged messages (%d in flight at a kill, re-sent), %d rows, %d reads, %d compactions",
		run, tortureProcs, tortureGoroutines, kills, len(acked), resent, rows, reads.Load(), compactions.Load())
	t.Logf("search found each of %d acknowledged messages checked (%d still queued for the index at the end)", searchable, s.Stats().IndexQueued)
	// Loose floors (a loaded CI machine under -race is slow): enough to show
	// every actor ran.
	if kills < 3 || len(acked) < 100 || compactions.Load() < 1 {
		t.Errorf("the torture barely ran: %d kills, %d acknowledged, %d compactions", kills, len(acked), compactions.Load())
	}
}

// wantSearchable checks that Search finds acknowledged messages by their
// key (a phrase of its words, in its session): every one in a short run;
// in a long one, the last 10 each process acknowledged before it was
// killed (those most likely still queued for the index when it died) and
// 5,000 more drawn at random. It returns how many it checked.
func wantSearchable(t *testing.T, s *db.Store, ackOrder, lastBeforeKill []string) int {
	t.Helper()
	check := ackOrder
	if len(ackOrder) > 20000 {
		rng := rand.New(rand.NewPCG(15, 16))
		picked := map[string]bool{}
		for range 5000 {
			picked[ackOrder[rng.IntN(len(ackOrder))]] = true
		}
		for _, k := range lastBeforeKill {
			picked[k] = true
		}
		check = nil
		for k := range picked {
			check = append(check, k)
		}
	}
	missing := 0
	for _, key := range check {
		sid, _, _ := strings.Cut(key, "/")
		hits, err := s.Search(t.Context(), `"`+key+`"`, db.SearchOptions{SessionID: sid, Sort: db.SortNewest})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 {
			if missing++; missing <= 10 {
				t.Errorf("Search(%q): %d hits, want the acknowledged message", key, len(hits))
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged messages checked not found by Search", missing, len(check))
	}
	return len(check)
}

// tortureProc is one writer process as the test sees it.
type tortureProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	done chan struct{}
	// +checklocks:mu
	acked []string
	// +checklocks:mu
	inFlight map[string]bool
}

func startTortureProc(t *testing.T, path, prefix string, retry []string) *tortureProc {
	t.Helper()
	cmd, out := startHelper(t, "torture", path, "SESSIONDB_TEST_PREFIX="+prefix, "SESSIONDB_TEST_RETRY="+strings.Join(retry, ","))
	p := &tortureProc{cmd: cmd, done: make(chan struct{}), inFlight: map[string]bool{}}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			verb, key, _ := strings.Cut(sc.Text(), " ")
			p.mu.Lock()
			switch verb {
			case "send":
				p.inFlight[key] = true
			case "ack":
				p.acked = append(p.acked, key)
				delete(p.inFlight, key)
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *tortureProc) waitForAck(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		p.mu.Lock()
		n := len(p.acked)
		p.mu.Unlock()
		if n > 0 {
			return
		}
	}
	t.Fatal("a writer process acknowledged nothing in 30 s")
}

// kill sends SIGKILL and returns what the process acknowledged and what it
// had in flight. A process that had already ended by itself fails the test:
// writers only stop when killed, so it met an error (on its stderr).
func (p *tortureProc) kill(t *testing.T) (acked, inFlight []string) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.cmd.Wait()
	mustHaveBeenKilled(t, p.cmd)
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.inFlight {
		inFlight = append(inFlight, k)
	}
	return p.acked, inFlight
}
