package pg

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// A fleet of gateway processes appending keyed turns to shared
// conversations, 16 appenders each, while a killer SIGKILLs random
// processes (and starts them again) and the server is restarted with
// `pg_ctl restart -m fast` (every backend ends, in-flight transactions
// are rolled back). Nothing acknowledged may be lost or stored twice, and
// every error a caller sees must be one the README tells it what to do
// with (ErrCommitUnknown: resend with the same key; ErrLocked: nothing was
// written, resend) — never the server's or the driver's raw text.
const (
	fleetEnv      = "SESSIONDB_PG_FLEET" // schema,generation
	fleetSessions = 8
)

// TestAppendFleetProcess is one gateway of
// TestAppend_FleetKilledAndServerRestarted (and nothing otherwise). It
// appends until killed or stdin closes, printing "ack <session> <key>
// <id>" for each acknowledged turn and "raw <error>" for any other error
// than the two a caller resends on.
func TestAppendFleetProcess(t *testing.T) {
	spec := os.Getenv(fleetEnv)
	if spec == "" {
		return
	}
	schema, gen, _ := strings.Cut(spec, ",")
	ctx := context.Background()
	s, err := Open(ctx, testDSN(t), Options{Schema: schema, TranscriptPatience: 30 * time.Second})
	if err != nil {
		fmt.Println("raw open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	print := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(out, format, args...)
		out.Flush()
		mu.Unlock()
	}
	stop := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stop) }()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				session := fmt.Sprint("fleet-", rand.N(fleetSessions))
				key := fmt.Sprintf("g%s-w%d-n%d", gen, w, n)
				m := store.NewMessage{Role: store.RoleUser, Content: key, IdempotencyKey: key}
				for {
					id, err := s.AppendMessage(ctx, session, m)
					if err == nil {
						print("ack %s %s %d\n", session, key, id)
						break
					}
					if !errors.Is(err, store.ErrCommitUnknown) && !errors.Is(err, store.ErrLocked) {
						print("raw %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
						return
					}
					time.Sleep(10 * time.Millisecond) // resend: the key makes it exactly once
				}
			}
		})
	}
	wg.Wait()
	s.Close()
	os.Exit(0)
}

// fleetDuration is how long the fleet runs: SESSIONDB_PG_FLEET_DURATION
// (a Go duration; the figures in docs/PERFORMANCE.md ran 5m), else 20 s.
func fleetDuration(t *testing.T) time.Duration {
	if v := os.Getenv("SESSIONDB_PG_FLEET_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SESSIONDB_PG_FLEET_DURATION: %v", err)
		}
		return d
	}
	return 20 * time.Second
}

func TestAppend_FleetKilledAndServerRestarted(t *testing.T) {
	restart := strings.Replace(restartCommand(t), "-m immediate", "-m fast", 1)
	const procs = 4
	run := fleetDuration(t)
	s := openTestStore(t, Options{})
	ctx := t.Context()
	for i := range fleetSessions {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("fleet-", i), Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	acked := map[string]int64{} // key → id
	sessionOf := map[string]string{}
	var raw []string
	type proc struct {
		cmd  *exec.Cmd
		stop io.Closer
		read chan struct{}
	}
	gen := 0
	start := func() *proc {
		gen++
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendFleetProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d", fleetEnv, s.Schema(), gen))
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
		p := &proc{cmd: cmd, stop: stdin, read: make(chan struct{})}
		go func() {
			defer close(p.read)
			r := bufio.NewReader(stdout)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return // a line cut by SIGKILL was never acknowledged
				}
				f := strings.Fields(line)
				switch {
				case len(f) == 4 && f[0] == "ack":
					id, _ := strconv.ParseInt(f[3], 10, 64)
					mu.Lock()
					acked[f[2]], sessionOf[f[2]] = id, f[1]
					mu.Unlock()
				case len(f) > 0 && f[0] == "raw":
					mu.Lock()
					raw = append(raw, strings.TrimSpace(line))
					mu.Unlock()
				}
			}
		}()
		return p
	}
	ps := make([]*proc, procs)
	for i := range ps {
		ps[i] = start()
	}
	began := time.Now()
	kills, restarts := 0, 0
	nextRestart := began.Add(run / 3)
	for time.Since(began) < run {
		time.Sleep(time.Duration(300+rand.N(1200)) * time.Millisecond)
		if time.Now().After(nextRestart) {
			if out, err := exec.Command("sh", "-c", restart).CombinedOutput(); err != nil {
				t.Fatalf("restart the server: %v\n%s", err, out)
			}
			restarts++
			nextRestart = nextRestart.Add(run / 3)
			continue
		}
		i := rand.N(procs)
		if err := ps[i].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-ps[i].read
		_ = ps[i].cmd.Wait()
		kills++
		ps[i] = start()
	}
	for _, p := range ps { // a clean stop: stdin closes, appends in flight end
		p.stop.Close()
	}
	for i, p := range ps {
		<-p.read
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("gateway %d at the end: %v", i, err)
		}
	}
	for _, r := range raw {
		t.Errorf("a caller got a raw error: %s", r)
	}
	stored := map[string]int64{}
	total := 0
	for i := range fleetSessions {
		id := fmt.Sprint("fleet-", i)
		msgs, err := s.Messages(ctx, id, store.MessageQuery{Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if prev, dup := stored[m.Content]; dup {
				t.Errorf("%s stored twice (%d, %d)", m.Content, prev, m.ID)
			}
			stored[m.Content] = m.ID
		}
		sess, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sess.MessageCount != int64(len(msgs)) {
			t.Errorf("%s: counter %d, %d rows", id, sess.MessageCount, len(msgs))
		}
		total += len(msgs)
	}
	lost := 0
	for key, id := range acked {
		if stored[key] != id {
			lost++
			if lost <= 10 {
				t.Errorf("%s (in %s) acknowledged as %d, stored as %d", key, sessionOf[key], id, stored[key])
			}
		}
	}
	t.Logf("%v, %d gateways × 16 appenders: %d SIGKILLs, %d server restarts (-m fast); %d appends acknowledged, %d rows (the rest were in flight when killed), %d lost, %d raw errors",
		run.Round(time.Second), procs, kills, restarts, len(acked), total, lost, len(raw))
}
