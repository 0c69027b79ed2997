//go:build unix

package tests

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// Sessions of indexed messages are deleted by a process killed with
// SIGKILL at random — in a delete, or while its indexer forgets what was
// deleted — and restarted on what is left, while another process appends
// and is killed too. After each kill the file verifies (the deleted rows'
// old text still queued is accounted for); at the end no search finds a
// deleted message, the queues empty, and every acknowledged append is
// there exactly once.
func TestKillNine_DeletesForgottenAcrossKills(t *testing.T) {
	const sessions, perSession = 12, 300
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	ctx := t.Context()
	var ids []string
	for i := range sessions {
		id := fmt.Sprintf("d%d", i)
		ids = append(ids, id)
		if _, err := s.CreateSession(ctx, db.NewSession{ID: id, Source: "kill"}); err != nil {
			t.Fatal(err)
		}
		batch := make([]db.NewMessage, perSession)
		for j := range batch {
			batch[j] = db.NewMessage{Role: db.RoleUser, Content: fmt.Sprintf("doomed%dword message %d of a session to delete", i, j)}
		}
		if _, err := s.AppendMessages(ctx, id, batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.IndexNow(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// The appender runs no indexer: a deleter killed right after a delete
	// returned leaves its text queued (its own indexer waits 20 ms). It
	// paces itself, because every row it queues is indexed by the next
	// deleter's Open: unpaced, under -race, it queued ~50,000 rows and the
	// test took minutes.
	appenderEnv := []string{"SESSIONDB_TEST_MANUAL_INDEXING=1", "SESSIONDB_TEST_APPEND_PAUSE=5ms"}
	appender := startWriter(t, path, "a0", "", appenderEnv...)
	appender.waitForAck(t)
	acked := map[string]bool{}
	rng := rand.New(rand.NewPCG(11, 7))
	left := slices.Clone(ids)
	kills, killedQueued := 0, 0
	for round := 0; len(left) > 0 || round < 10; round++ {
		if round > 200 {
			t.Fatalf("sessions still not deleted after %d rounds: %v", round, left)
		}
		var deleted func() []string
		var stop func()
		if round%2 == 0 && len(left) > 0 {
			var first <-chan struct{}
			// Right after a delete returned, by a deleter that runs no
			// indexer: its text is still queued at the kill.
			deleted, first, stop = startDeleter(t, path, left, "SESSIONDB_TEST_MANUAL_INDEXING=1")
			select {
			case <-first:
			case <-time.After(10 * time.Second):
			}
		} else {
			// At a random moment, perhaps while its indexer forgets.
			deleted, _, stop = startDeleter(t, path, left)
			time.Sleep(time.Duration(20+rng.IntN(150)) * time.Millisecond)
		}
		stop()
		kills++
		// Read by Python's sqlite3: Open would index what is queued.
		if n := strings.TrimSpace(runPython(t, "import sqlite3, sys\nprint(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM fts_deleted').fetchone()[0])", path)); n != "0" {
			killedQueued++
		}
		gone := deleted()
		left = slices.DeleteFunc(left, func(id string) bool { return slices.Contains(gone, id) })
		if round%3 == 2 {
			keys, inFlight := appender.kill(t)
			for _, k := range keys {
				acked[k] = true
			}
			appender = startWriter(t, path, fmt.Sprintf("a%d", round), inFlight, appenderEnv...)
		}
		if r, err := db.Verify(t.Context(), path); err != nil || r.Health != db.HealthVerified || r.FTS != "ok" {
			t.Fatalf("after kill %d: verify = %s %v %q %v", kills, r.Health, r.Details, r.FTS, err)
		}
	}
	if killedQueued == 0 {
		t.Error("no kill left deleted rows' text queued: the test did not test forgetting across a kill")
	}
	keys, _ := appender.kill(t)
	for _, k := range keys {
		acked[k] = true
	}
	checkExactlyOnce(t, path, acked)

	s = openStore(t, path, db.Options{})
	if err := s.IndexNow(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.Stats().IndexQueued; n != 0 {
		t.Errorf("%d changes still queued after IndexNow", n)
	}
	for i := range sessions {
		word := fmt.Sprintf("doomed%dword", i)
		hits, err := s.Search(ctx, word, db.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 0 {
			t.Errorf("search %q after its session was deleted: %d hits", word, len(hits))
		}
	}
	if r, err := db.Verify(t.Context(), path); err != nil || r.Health != db.HealthVerified || r.FTS != "ok" {
		t.Errorf("at the end: verify = %s %v %q %v", r.Health, r.Details, r.FTS, err)
	}
	t.Logf("%d kills of the deleting process (%d left deleted text queued), %d acknowledged appends", kills, killedQueued, len(acked))
}

// startDeleter starts a deleting process on ids; first is closed when it
// says it deleted one, stop kills it, and deleted then returns the
// sessions it said it deleted.
func startDeleter(t *testing.T, path string, ids []string, env ...string) (deleted func() []string, first <-chan struct{}, stop func()) {
	t.Helper()
	cmd, out := startHelper(t, "delete-sessions", path, append([]string{"SESSIONDB_TEST_SESSIONS=" + strings.Join(ids, ",")}, env...)...)
	var mu sync.Mutex
	var said []string
	done, one := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "deleted "); ok {
				mu.Lock()
				said = append(said, id)
				if len(said) == 1 {
					close(one)
				}
				mu.Unlock()
			}
		}
	}()
	stop = func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		cmd.Wait()
		mustHaveBeenKilled(t, cmd)
	}
	deleted = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return said
	}
	return deleted, one, stop
}
