package pg

import (
	"bufio"
	"context"
	"fmt"
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
	"github.com/sessiondb/sessiondb/storetest"
)

// Gateway replicas as separate processes, appending the same keyed turns
// to shared conversations while a killer SIGKILLs them and they restart
// and re-send everything. Every acknowledged message must be stored
// exactly once, under the id its sender was given, and each session's
// counter must equal its rows.
const (
	replicaEnv      = "SESSIONDB_PG_REPLICA_SCHEMA"
	replicaSessions = 3
	replicaTurns    = 150
)

// TestAppendReplicaProcess is a replica when run by
// TestAppend_ReplicasKilledAndRestarted (and nothing otherwise): it
// appends every turn, retrying each until acknowledged, and prints
// "ack <session> <key> <id>" for each, then "done".
func TestAppendReplicaProcess(t *testing.T) {
	schema := os.Getenv(replicaEnv)
	if schema == "" {
		return
	}
	ctx := context.Background()
	s, err := Open(ctx, testDSN(t), Options{Schema: schema})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	start := rand.N(replicaTurns)
	for i := range replicaTurns {
		k := (start + i) % replicaTurns
		session := fmt.Sprintf("conv-%d", k%replicaSessions)
		m := store.NewMessage{Role: store.RoleUser, Content: fmt.Sprintf("turn %d", k), IdempotencyKey: fmt.Sprintf("k%d", k)}
		for {
			id, err := s.AppendMessage(ctx, session, m)
			if err == nil {
				fmt.Fprintf(out, "ack %s k%d %d\n", session, k, id)
				out.Flush()
				break
			}
			fmt.Fprintln(os.Stderr, "append (retrying):", err)
			time.Sleep(10 * time.Millisecond)
		}
	}
	fmt.Fprintln(out, "done")
	out.Flush()
	s.Close()
	os.Exit(0)
}

func TestAppend_ReplicasKilledAndRestarted(t *testing.T) {
	const replicas, kills = 4, 12
	s := openTestStore(t, Options{})
	ctx := t.Context()
	for i := range replicaSessions {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: fmt.Sprintf("conv-%d", i), Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	acked := map[string]int64{} // "session key" -> id
	var ackErrs []string
	done := map[*exec.Cmd]bool{}          // replicas that sent everything
	read := map[*exec.Cmd]chan struct{}{} // closed when its output is read to the end
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendReplicaProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), replicaEnv+"="+s.Schema())
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		eof := make(chan struct{})
		read[cmd] = eof
		go func() {
			defer close(eof)
			r := bufio.NewReader(stdout)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return // a line cut by SIGKILL was never acknowledged
				}
				f := strings.Fields(line)
				if len(f) == 1 && f[0] == "done" {
					mu.Lock()
					done[cmd] = true
					mu.Unlock()
				}
				if len(f) != 4 || f[0] != "ack" {
					continue // the test binary's own output
				}
				id, _ := strconv.ParseInt(f[3], 10, 64)
				mu.Lock()
				if prev, ok := acked[f[1]+" "+f[2]]; ok && prev != id {
					ackErrs = append(ackErrs, fmt.Sprintf("%s %s acknowledged as %d and %d", f[1], f[2], prev, id))
				}
				acked[f[1]+" "+f[2]] = id
				mu.Unlock()
			}
		}()
		return cmd
	}
	// wait reads a replica's output to its end, then reaps it (Wait
	// closes the pipe, so it comes last).
	wait := func(cmd *exec.Cmd) error {
		<-read[cmd]
		return cmd.Wait()
	}
	procs := make([]*exec.Cmd, replicas)
	for i := range procs {
		procs[i] = start()
	}
	// Each kill lands on a replica still sending (one that finished is
	// started again instead: a restart re-sends everything too).
	killed := 0
	for killed < kills {
		time.Sleep(time.Duration(20+rand.N(80)) * time.Millisecond)
		i := rand.N(replicas)
		mu.Lock()
		finished := done[procs[i]]
		mu.Unlock()
		if !finished {
			if err := procs[i].Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed++
		}
		wait(procs[i])
		procs[i] = start()
	}
	for i, p := range procs {
		if err := wait(p); err != nil {
			t.Errorf("replica %d (after the kills): %v", i, err)
		}
	}
	for _, e := range ackErrs {
		t.Error(e)
	}

	total := 0
	for i := range replicaSessions {
		session := fmt.Sprintf("conv-%d", i)
		msgs := storetest.WholeSession(t, s.Store, session) // checks MessageCount against the rows
		byKey := map[string]int{}
		for _, m := range msgs {
			key := "k" + strings.TrimPrefix(m.Content, "turn ")
			byKey[key]++
			if id, ok := acked[session+" "+key]; ok && id != m.ID {
				t.Errorf("%s %s: stored as %d, acknowledged as %d", session, key, m.ID, id)
			}
		}
		for k := i; k < replicaTurns; k += replicaSessions {
			if n := byKey[fmt.Sprintf("k%d", k)]; n != 1 {
				t.Errorf("%s k%d stored %d times, want once", session, k, n)
			}
		}
		total += len(msgs)
	}
	if total != replicaTurns || len(acked) != replicaTurns {
		t.Errorf("%d messages stored, %d acknowledged, want %d each", total, len(acked), replicaTurns)
	}
	t.Logf("%d replicas, %d SIGKILLs: %d messages acknowledged, each stored once", replicas, killed, len(acked))
}
