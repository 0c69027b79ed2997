package pg

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/storetest"
)

// restartCommand is a shell command restarting the test server at once
// (pg_ctl restart -m immediate: a crash and recovery), which
// scripts/test.sh's throwaway cluster exports. Without it the test skips,
// or fails under CI=true.
func restartCommand(t *testing.T) string {
	t.Helper()
	cmd := os.Getenv("SESSIONDB_PG_RESTART")
	if cmd == "" {
		const how = "SESSIONDB_PG_RESTART is not set: `bash scripts/test.sh` sets it for its throwaway cluster " +
			"(a command such as `pg_ctl -D DATA -m immediate -w restart` run as postgres)"
		if os.Getenv("CI") == "true" {
			t.Fatal(how)
		}
		t.Skip(how)
	}
	return cmd
}

// TestServerRestartUnderLoad: the server crashes and restarts while
// writers append keyed turns, one or five a call. Calls in flight end with success, or with
// ErrCommitUnknown (then resent with the same key), within their
// patience; nothing acknowledged is lost or doubled, and the same store
// works afterwards without reopening.
func TestServerRestartUnderLoad(t *testing.T) {
	restart := restartCommand(t)
	const writers, patience = 8, 15 * time.Second
	s := openTestStore(t, Options{WritePatience: patience / 3, TranscriptPatience: patience})
	ctx := t.Context()
	for w := range writers {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("w", w), Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var unknown, slowest atomic.Int64
	acked := make([]map[string]int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		acked[w] = map[string]int64{}
		wg.Go(func() {
			for n := 0; !stop.Load(); n++ {
				// Even writers append one message a call, odd ones five (one
				// multi-row INSERT, insertbatch.go).
				var keys []string
				var batch []store.NewMessage
				for j := range 1 + 4*(w%2) {
					key := fmt.Sprintf("k%d.%d", n, j)
					keys = append(keys, key)
					batch = append(batch, store.NewMessage{Role: store.RoleUser, Content: "turn " + key, IdempotencyKey: key})
				}
				for {
					start := time.Now()
					ids, err := s.AppendMessages(ctx, fmt.Sprint("w", w), batch)
					if took := time.Since(start); took > time.Duration(slowest.Load()) {
						slowest.Store(int64(took))
					}
					if err == nil {
						for j, key := range keys {
							acked[w][key] = ids[j]
						}
						break
					}
					if !errors.Is(err, store.ErrCommitUnknown) {
						t.Errorf("writer %d %v: %v (want success or ErrCommitUnknown)", w, keys, err)
						return
					}
					unknown.Add(1) // resend: the keys make it exactly once
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	began := time.Now()
	if out, err := exec.Command("sh", "-c", restart).CombinedOutput(); err != nil {
		stop.Store(true)
		wg.Wait()
		t.Fatalf("restart the server: %v\n%s", err, out)
	}
	down := time.Since(began)
	time.Sleep(500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	if max := time.Duration(slowest.Load()); max > patience+5*time.Second {
		t.Errorf("the slowest append took %v, patience is %v", max, patience)
	}
	total := 0
	for w := range writers {
		msgs := storetest.WholeSession(t, s.Store, fmt.Sprint("w", w)) // checks MessageCount against the rows
		stored := map[string]int64{}
		for _, m := range msgs {
			key := m.Content[len("turn "):]
			if _, dup := stored[key]; dup {
				t.Errorf("writer %d %s stored twice", w, key)
			}
			stored[key] = m.ID
		}
		for key, id := range acked[w] {
			if stored[key] != id {
				t.Errorf("writer %d %s acknowledged as %d, stored as %d", w, key, id, stored[key])
			}
		}
		total += len(acked[w])
	}
	t.Logf("restart took %v; %d messages acknowledged, %d calls ended ErrCommitUnknown and were resent, slowest %v",
		down.Round(time.Millisecond), total, unknown.Load(), time.Duration(slowest.Load()).Round(time.Millisecond))
}

// TestOpen_RidesOutAServerRestart: stores opened while the server shuts
// down and starts again (pg_ctl restart -m fast: every backend ends with
// 57P01, then connections are refused, then 57P03 while it starts) open,
// each within its patience: Open runs its steps again on a new
// connection, as a write does. Before, an open the restart cut answered
// the server's raw "terminating connection due to administrator command"
// (the fleet test's gateways, 2026-12-06).
func TestOpen_RidesOutAServerRestart(t *testing.T) {
	restart := strings.Replace(restartCommand(t), "-m immediate", "-m fast", 1)
	schema := freshSchema(t)
	first, err := Open(t.Context(), testDSN(t), Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	var stop atomic.Bool
	var opened, retried atomic.Int64
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				start := time.Now()
				s, err := Open(t.Context(), testDSN(t), Options{Schema: schema, OpenPatience: 30 * time.Second})
				if err != nil {
					errs <- err
					return
				}
				if time.Since(start) > 200*time.Millisecond {
					retried.Add(1) // it waited for the server: the case under test
				}
				opened.Add(1)
				s.Close()
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if out, err := exec.Command("sh", "-c", restart).CombinedOutput(); err != nil {
		stop.Store(true)
		wg.Wait()
		t.Fatalf("restart the server: %v\n%s", err, out)
	}
	before := opened.Load()
	for deadline := time.Now().Add(30 * time.Second); opened.Load() < before+8 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Open during the restart: %v (want it to wait for the server)", err)
	}
	if opened.Load() < before+8 {
		t.Errorf("%d opens after the restart, want 8 or more", opened.Load()-before)
	}
	t.Logf("%d opens, %d of them waited over 200 ms for the server", opened.Load(), retried.Load())
}

// An Open with no server at the address keeps trying within its patience,
// then answers ErrLocked, saying the server could not be reached (a
// typo'd socket directory costs the patience, a restart nothing).
func TestOpen_NoServerIsErrLockedAfterPatience(t *testing.T) {
	dsn := "host=" + t.TempDir() + " port=5432 user=postgres dbname=postgres sslmode=disable"
	start := time.Now()
	_, err := Open(t.Context(), dsn, Options{Schema: "nowhere", OpenPatience: 700 * time.Millisecond})
	took := time.Since(start)
	var locked *LockedError
	if !errors.Is(err, store.ErrLocked) || !errors.As(err, &locked) || !strings.Contains(err.Error(), "could not be reached") {
		t.Fatalf("Open with no server = %v, want a *LockedError saying the server could not be reached", err)
	}
	if took < 700*time.Millisecond || took > 10*time.Second {
		t.Errorf("Open with no server gave up after %v, want its patience (700ms)", took)
	}
}

// TestRead_WaitsForAServerThatIsDown: a read begun while the server is
// down (a restart's gap) waits for it and answers, within the store's
// write patience; past that patience it answers ErrLocked saying the
// server could not be reached, never the driver's connection error. (A
// read a shutdown cuts mid-statement answers the server's error:
// docs/RELIABILITY.md, PostgreSQL's known limits.)
func TestRead_WaitsForAServerThatIsDown(t *testing.T) {
	restart := restartCommand(t)
	// pg_ctl restart starts a stopped server with the options it last ran with.
	stop, start := strings.Replace(restart, " restart", " stop", 1), restart
	s := openTestStore(t, Options{WritePatience: 30 * time.Second})
	impatient, err := Open(t.Context(), testDSN(t), Options{Schema: s.Schema(), WritePatience: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"where is the walrus", "under the pier"} {
		if _, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: store.RoleUser, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("sh", "-c", stop).CombinedOutput(); err != nil {
		t.Fatalf("stop the server: %v\n%s", err, out)
	}
	up := false
	t.Cleanup(func() {
		if !up {
			_ = exec.Command("sh", "-c", start).Run()
		}
	})

	// The impatient store gives up after its patience, typed.
	began := time.Now()
	_, err = impatient.Messages(ctx, "s", store.MessageQuery{})
	var locked *LockedError
	if !errors.Is(err, store.ErrLocked) || !errors.As(err, &locked) || !strings.Contains(err.Error(), "could not be reached") {
		t.Errorf("a read with the server down past its patience = %v, want a *LockedError saying the server could not be reached", err)
	}
	if took := time.Since(began); took < 500*time.Millisecond || took > 10*time.Second {
		t.Errorf("it gave up after %v, want its patience (500ms)", took)
	}

	// Reads of every kind begun while it is down answer once it is back.
	reads := map[string]func() error{
		"Messages (a read)": func() error {
			msgs, err := s.Messages(ctx, "s", store.MessageQuery{})
			if err == nil && len(msgs) != 2 {
				return fmt.Errorf("%d messages, want 2", len(msgs))
			}
			return err
		},
		"Session": func() error { _, err := s.Session(ctx, "s"); return err },
		"Search (a snapshot)": func() error {
			hits, err := s.Search(ctx, "walrus", store.SearchOptions{})
			if err == nil && len(hits) != 1 {
				return fmt.Errorf("%d hits, want 1", len(hits))
			}
			return err
		},
	}
	errs := make(map[string]error)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, read := range reads {
		wg.Go(func() {
			err := read()
			mu.Lock()
			errs[name] = err
			mu.Unlock()
		})
	}
	time.Sleep(time.Second) // the reads are waiting for the server
	if out, err := exec.Command("sh", "-c", start).CombinedOutput(); err != nil {
		t.Fatalf("start the server: %v\n%s", err, out)
	}
	up = true
	wg.Wait()
	for name, err := range errs {
		if err != nil {
			t.Errorf("%s begun with the server down: %v (want it to wait and answer)", name, err)
		}
	}
}
