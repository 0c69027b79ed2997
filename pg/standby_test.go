package pg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store"
)

// standbyDSN is a hot standby of the test server (SESSIONDB_PG_DSN), made
// with pg_basebackup -R: scripts/test.sh starts one beside its throwaway
// cluster (scripts/pg-cluster.sh). Without one the standby tests skip
// locally, saying how to get one, and fail in CI, which must run them.
func standbyDSN(t *testing.T) string {
	t.Helper()
	primary := testDSN(t)
	dsn := os.Getenv("SESSIONDB_PG_STANDBY_DSN")
	if dsn == "" {
		const how = "SESSIONDB_PG_STANDBY_DSN is not set: run `bash scripts/test.sh` from the repository root " +
			"(it starts a throwaway primary and a hot standby made with pg_basebackup -R), or point it at a " +
			"streaming standby of the SESSIONDB_PG_DSN server"
		if os.Getenv("CI") == "true" {
			t.Fatal(how)
		}
		t.Skip(how)
	}
	if p, s := systemID(t, primary), systemID(t, dsn); p != s {
		t.Fatalf("SESSIONDB_PG_STANDBY_DSN is not a standby of SESSIONDB_PG_DSN (system identifiers %s and %s)", s, p)
	}
	return dsn
}

// systemID is the server's cluster identifier, which a standby made by
// pg_basebackup shares with its primary.
func systemID(t *testing.T, dsn string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var id string
	if err := conn.QueryRow(t.Context(), "SELECT system_identifier::text FROM pg_control_system()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// awaitReplay waits until the standby has replayed everything the primary
// had written when it was called.
func awaitReplay(t *testing.T, primary, standby string) {
	t.Helper()
	ctx := t.Context()
	p, err := pgx.Connect(ctx, primary)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	var lsn string
	if err := p.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	s, err := pgx.Connect(ctx, standby)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	for deadline := time.Now().Add(replayPatience); ; time.Sleep(20 * time.Millisecond) {
		var done bool
		if err := s.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby has not replayed the primary's WAL up to %s in %v (%s)", lsn, replayPatience, replayState(ctx, s))
		}
	}
}

// replayPatience is how long a test waits for the standby to replay what
// the primary wrote: seconds on a quiet machine, but the suite's earlier
// tests write hundreds of MB of WAL, and under the race detector on a
// loaded 2-core CI machine the standby fell more than 30 s behind
// (2026-12-06).
const replayPatience = 2 * time.Minute

// replayState says where the standby's replay stands, for a failure's
// message: paused or not, received and replayed positions, the WAL
// receiver's status and the recovery conflicts it has cancelled queries for.
func replayState(ctx context.Context, standby *pgx.Conn) string {
	var paused bool
	var received, replayed, receiver string
	var conflicts int64
	err := standby.QueryRow(ctx, `SELECT pg_is_wal_replay_paused(), COALESCE(pg_last_wal_receive_lsn()::text, ''),
		COALESCE(pg_last_wal_replay_lsn()::text, ''), COALESCE((SELECT status FROM pg_stat_wal_receiver), 'no receiver'),
		(SELECT COALESCE(sum(confl_tablespace + confl_lock + confl_snapshot + confl_bufferpin + confl_deadlock), 0) FROM pg_stat_database_conflicts)`).
		Scan(&paused, &received, &replayed, &receiver, &conflicts)
	if err != nil {
		return "state unknown: " + err.Error()
	}
	return fmt.Sprintf("paused %t, received %s, replayed %s, receiver %s, %d recovery conflicts%s", paused, received, replayed, receiver, conflicts, standbyLogErrors())
}

// standbyLogErrors is the last few FATAL and ERROR lines of the standby's
// log when scripts/pg-cluster.sh says where it is (SESSIONDB_PG_STANDBY_LOG):
// why its WAL receiver stopped is written there, not in any view.
func standbyLogErrors() string {
	path := os.Getenv("SESSIONDB_PG_STANDBY_LOG")
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "; its log: " + err.Error()
	}
	var lines []string
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, "FATAL:") || strings.Contains(line, "ERROR:") {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "; the standby's log's last errors: " + strings.Join(lines, " | ")
}

// A store opened on a hot standby is read-only without being asked:
// nothing migrates, the open says so, reads, searches and conversations
// see what the primary wrote, and every write is ErrReadOnly.
func TestStandby_OpensReadOnly(t *testing.T) {
	ctx := t.Context()
	standby := standbyDSN(t)
	primary := testDSN(t)
	w := openTestStore(t, Options{})
	if _, err := w.CreateSession(ctx, store.NewSession{ID: "s1", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"where is the walrus", "under the pier, with the narwhal"} {
		if _, err := w.AppendMessage(ctx, "s1", store.NewMessage{Role: store.RoleUser, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	awaitReplay(t, primary, standby)

	var log bytes.Buffer
	r, err := Open(ctx, standby, Options{Schema: w.Schema(), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatalf("Open on the standby: %v", err)
	}
	defer r.Close()
	if !r.ReadOnly() || !r.Standby() {
		t.Errorf("ReadOnly() = %v, Standby() = %v on a standby, want true, true", r.ReadOnly(), r.Standby())
	}
	if !strings.Contains(log.String(), "opened read-only") || !strings.Contains(log.String(), "standby=true") {
		t.Errorf("no log line says the store is read-only on a standby: %q", log.String())
	}
	msgs, err := r.Messages(ctx, "s1", store.MessageQuery{})
	if err != nil || len(msgs) != 2 {
		t.Errorf("Messages on the standby = %d, %v, want the primary's 2", len(msgs), err)
	}
	hits, err := r.Search(ctx, "narwhal", store.SearchOptions{})
	if err != nil || len(hits) != 1 {
		t.Errorf("Search on the standby = %d hits, %v, want 1", len(hits), err)
	}
	if _, err := r.Conversation(ctx, "s1", store.ConversationOptions{}); err != nil {
		t.Errorf("Conversation on the standby: %v", err)
	}
	if list, err := r.ListSessions(ctx, store.SessionFilter{}); err != nil || len(list) != 1 {
		t.Errorf("ListSessions on the standby = %d, %v, want 1", len(list), err)
	}

	_, err = r.AppendMessage(ctx, "s1", store.NewMessage{Role: store.RoleUser, Content: "refused", IdempotencyKey: "k"})
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "standby") {
		t.Errorf("AppendMessage on the standby = %v, want ErrReadOnly naming the standby", err)
	}
	if _, err := r.CreateSession(ctx, store.NewSession{ID: "s2", Source: "test"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("CreateSession on the standby = %v, want ErrReadOnly", err)
	}
	if _, err := MigrateStore(ctx, standby, Options{Schema: w.Schema()}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("MigrateStore on the standby = %v, want ErrReadOnly", err)
	}
	if st, err := SchemaVersion(ctx, standby, Options{Schema: w.Schema()}); err != nil || !st.Current() {
		t.Errorf("SchemaVersion on the standby = %+v, %v, want current", st, err)
	}
}

// A standby cannot migrate: a schema the primary never made, or left at
// an older version, is a *SchemaBehindError saying to migrate the primary.
func TestStandby_SchemaBehind(t *testing.T) {
	ctx := t.Context()
	standby := standbyDSN(t)
	old := schemaAtVersion(t, 3)
	missing := freshSchema(t)
	awaitReplay(t, testDSN(t), standby)
	for _, c := range []struct {
		schema string
		have   int64
	}{{old, 3}, {missing, 0}} {
		s, err := Open(ctx, standby, Options{Schema: c.schema})
		var behind *SchemaBehindError
		if !errors.As(err, &behind) {
			if s != nil {
				s.Close()
			}
			t.Errorf("Open on the standby of a version-%d schema = %v, want a *SchemaBehindError", c.have, err)
			continue
		}
		if behind.Have != c.have || behind.Want != latestMigration() || !strings.Contains(err.Error(), "migrate the primary") {
			t.Errorf("Open on the standby of a version-%d schema = %v, want have %d, want %d, saying to migrate the primary",
				c.have, err, c.have, latestMigration())
		}
	}
}

// Read-your-writes through a replica: after each append on the primary,
// the replica store waits for the primary's Position and then sees the
// message at once. A position the standby will not reach ends with the
// caller's context; one that is not a position is ErrInvalidInput.
func TestStandby_ReadYourWritesAfterWaitFor(t *testing.T) {
	ctx := t.Context()
	standby := standbyDSN(t)
	w := openTestStore(t, Options{})
	if _, err := w.CreateSession(ctx, store.NewSession{ID: "s1", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	awaitReplay(t, testDSN(t), standby)
	r, err := Open(ctx, standby, Options{Schema: w.Schema(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range 20 {
		id, err := w.AppendMessage(ctx, "s1", store.NewMessage{Role: store.RoleUser, Content: "turn"})
		if err != nil {
			t.Fatal(err)
		}
		pos, err := w.Position(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.WaitFor(ctx, pos); err != nil {
			t.Fatalf("WaitFor(%s): %v", pos, err)
		}
		msgs, err := r.Messages(ctx, "s1", store.MessageQuery{})
		if err != nil || len(msgs) != i+1 || msgs[i].ID != id {
			t.Fatalf("after WaitFor the replica shows %d messages (%v), want %d ending with %d", len(msgs), err, i+1, id)
		}
	}
	if err := w.WaitFor(ctx, "FFFFFFFF/FFFFFFFF"); err != nil {
		t.Errorf("WaitFor on the primary = %v, want nil at once", err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := r.WaitFor(short, "FFFFFFFF/FFFFFFFF"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitFor of a position the standby never reaches = %v, want the context's deadline", err)
	}
	for _, bad := range []Position{"", "0/", "x/1", "1/2/3", "0/123456789", "0/1; DROP TABLE sessions"} {
		if err := r.WaitFor(ctx, bad); !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("WaitFor(%q) = %v, want ErrInvalidInput", bad, err)
		}
	}
}
