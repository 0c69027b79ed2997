package pg

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store"
)

// TestReplicas_ReadsRoutedReadYourWrites: one Open with the test
// server's standby as a replica (issue 31, item 2). Reads go to the
// replica once it has replayed the store's writes; a read right after an
// append sees it (read-your-writes), even with the replica's replay
// paused, when the read goes to the primary; another store that wrote
// nothing reads the paused replica and sees the old state (the
// replication-lag rule for other processes' writes).
func TestReplicas_ReadsRoutedReadYourWrites(t *testing.T) {
	standby := standbyDSN(t)
	ctx := t.Context()
	schema := freshSchema(t)
	// The open waits for the replica to replay the primary's log: as long
	// as awaitReplay would (replayPatience).
	s, err := Open(ctx, testDSN(t), Options{Schema: schema, Replicas: []string{standby}, OpenPatience: replayPatience})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		id, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: store.RoleUser, Content: "turn"})
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := s.Messages(ctx, "s", store.MessageQuery{})
		if err != nil || len(msgs) != i+1 || msgs[i].ID != id {
			t.Fatalf("append %d then Messages: %d messages, %v; want %d ending with %d", i, len(msgs), err, i+1, id)
		}
	}
	// Once the replica has replayed the writes (it streams asynchronously:
	// until then reads go to the primary), reads go there.
	route := &s.eng.route
	awaitReadOnReplica(t, s, 10*time.Second)
	primaryBefore := route.onPrimary.Load()
	for range 5 {
		if _, err := s.Messages(ctx, "s", store.MessageQuery{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := route.onPrimary.Load() - primaryBefore; got != 0 {
		t.Errorf("%d reads went to the primary after the replica caught up, want 0", got)
	}

	// The replica stops replaying: this store's reads go to the primary
	// and see its writes; a reader that wrote nothing sees the replica.
	reader, err := Open(ctx, testDSN(t), Options{Schema: schema, Replicas: []string{standby}, OpenPatience: replayPatience})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	pauseReplay(t, standby)
	id, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: store.RoleUser, Content: "while paused"})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(ctx, "s", store.MessageQuery{})
	if err != nil || len(msgs) != 21 || msgs[20].ID != id {
		t.Fatalf("the writer's read while the replica is paused: %d messages, %v; want 21 ending with %d", len(msgs), err, id)
	}
	old, err := reader.Messages(ctx, "s", store.MessageQuery{})
	if err != nil || len(old) != 20 {
		t.Errorf("a reader that wrote nothing: %d messages, %v; want the replica's 20", len(old), err)
	}
	if err := reader.WaitFor(ctx, mustPosition(t, s)); err != nil {
		t.Fatal(err) // the reader's own handle is on the primary: returns at once
	}

	// A replica that is a primary is refused.
	if _, err := Open(ctx, testDSN(t), Options{Schema: schema, Replicas: []string{testDSN(t)}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Open with the primary as a replica = %v, want ErrInvalidConfig", err)
	}
}

// pauseReplay pauses the standby's replay until the test ends.
func pauseReplay(t *testing.T, standby string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), standby)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := conn.Exec(context.Background(), "SELECT pg_wal_replay_resume()"); err != nil {
			t.Errorf("resume the standby's replay: %v", err)
		}
		conn.Close(context.Background())
	})
	if _, err := conn.Exec(t.Context(), "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
}

func mustPosition(t *testing.T, s *Store) Position {
	t.Helper()
	pos, err := s.Position(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// TestReplicas_ReplicaDownReadsGoToThePrimary: with the store's replica
// stopped, reads routed to it (it had caught up, so the route picks it
// without asking) answer from the primary instead, the plain read and
// the snapshot alike: a replica that cannot be reached hands the read to
// the primary, which has every write (reconnecting, tx.go).
func TestReplicas_ReplicaDownReadsGoToThePrimary(t *testing.T) {
	standby := standbyDSN(t)
	restart := os.Getenv("SESSIONDB_PG_STANDBY_RESTART")
	if restart == "" {
		const how = "SESSIONDB_PG_STANDBY_RESTART is not set: `bash scripts/test.sh` sets it for its throwaway standby"
		if os.Getenv("CI") == "true" {
			t.Fatal(how)
		}
		t.Skip(how)
	}
	ctx := t.Context()
	s, err := Open(ctx, testDSN(t), Options{Schema: freshSchema(t), Replicas: []string{standby}, OpenPatience: replayPatience})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: store.RoleUser, Content: "where is the walrus"}); err != nil {
		t.Fatal(err)
	}
	route := &s.eng.route
	awaitReadOnReplica(t, s, replayPatience)

	if out, err := exec.Command("sh", "-c", strings.Replace(restart, " restart", " stop", 1)).CombinedOutput(); err != nil {
		t.Fatalf("stop the standby: %v\n%s", err, out)
	}
	defer func() {
		if out, err := exec.Command("sh", "-c", restart).CombinedOutput(); err != nil {
			t.Errorf("start the standby again: %v\n%s", err, out)
		}
	}()
	before := route.onReplica.Load()
	for range 3 {
		msgs, err := s.Messages(ctx, "s", store.MessageQuery{})
		if err != nil || len(msgs) != 1 {
			t.Fatalf("Messages with the replica down: %d messages, %v; want 1 from the primary", len(msgs), err)
		}
		hits, err := s.Search(ctx, "walrus", store.SearchOptions{})
		if err != nil || len(hits) != 1 {
			t.Fatalf("Search with the replica down: %d hits, %v; want 1 from the primary", len(hits), err)
		}
	}
	if route.onReplica.Load() == before {
		t.Error("no read was routed to the replica while it was down: the fallback went untested")
	}
}

// awaitReadOnReplica reads session "s" until a read goes to the store's
// replica (it streams asynchronously: until it has replayed the store's
// writes, reads go to the primary), failing the test after within.
func awaitReadOnReplica(t *testing.T, s *Store, within time.Duration) {
	t.Helper()
	route := &s.eng.route
	for deadline := time.Now().Add(within); ; time.Sleep(5 * time.Millisecond) {
		before := route.onReplica.Load()
		if _, err := s.Messages(t.Context(), "s", store.MessageQuery{}); err != nil {
			t.Fatal(err)
		}
		if route.onReplica.Load() > before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no read went to the replica within %v of the last write", within)
		}
	}
}
