package pg

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
)

// appendRiding is a plain append as the store makes it: its row rides
// (driver.MessageInsertDeferrer) where the engine lets it, else is
// inserted; then its session is counted, ErrNotFound when it counted
// nothing. id receives the row's id.
func appendRiding(sid, content string, id *int64) func(context.Context, driver.Executor) error {
	return func(ctx context.Context, tx driver.Executor) error {
		rows := []driver.MessageInsertParams{{SessionID: sid, Role: "user", Content: content, CreatedAt: time.Now().UnixMilli()}}
		d, ok := tx.(driver.MessageInsertDeferrer)
		if !ok || !d.MessageInsertDeferred(ctx, rows, func(_ int, got int64) { *id = got }) {
			got, err := tx.MessageInsert(ctx, rows[0])
			if err != nil {
				return err
			}
			*id = got
		}
		n, err := tx.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{ID: sid, Messages: 1})
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return err
	}
}

// ridingBatch is runOneBatch of appendRiding callers, one for each of
// sessions; it returns their outcomes and their rows' ids.
func ridingBatch(t *testing.T, s *Store, sessions []string) ([]appendResult, []int64) {
	t.Helper()
	ids := make([]int64, len(sessions))
	fns := make([]func(context.Context, driver.Executor) error, len(sessions))
	for i, sid := range sessions {
		fns[i] = appendRiding(sid, sid, &ids[i])
	}
	return runOneBatch(t, s, sessions, fns), ids
}

// storeWithSessions opens a test store holding the sessions ids.
func storeWithSessions(t *testing.T, ids ...string) *Store {
	t.Helper()
	s := openTestStore(t, Options{})
	for _, id := range ids {
		if _, err := s.CreateSession(t.Context(), store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// warmOneRound runs batches of plain appends to sessions until one goes
// in one round trip: the statements are then prepared on the connection
// the next batch takes (the pool hands out the one released last).
func warmOneRound(t *testing.T, s *Store, sessions ...string) {
	t.Helper()
	a := s.eng.appends
	for try, before := 0, a.oneRounds.Load(); a.oneRounds.Load() == before; try++ {
		if try == 4 {
			t.Fatal("4 batches, none sent in one round trip")
		}
		res, _ := ridingBatch(t, s, sessions)
		for i, r := range res {
			if r.err != nil {
				t.Fatalf("warming, caller %d (%s): %v", i, sessions[i], r.err)
			}
		}
	}
}

// A batch of plain appends, two of one session among them, is one round
// trip (oneround.go) and commits as two would: every caller answered,
// each its own row's id, every session counted.
func TestOneRound_PlainAppendsCommitInOne(t *testing.T) {
	s := storeWithSessions(t, "a", "b", "c")
	ctx := t.Context()
	a := s.eng.appends
	sessions := []string{"a", "b", "a", "c"}
	var ids []int64
	batches := 0
	// A connection's first batch prepares the statements (prepareOneRound).
	for before := a.oneRounds.Load(); a.oneRounds.Load() == before; batches++ {
		if batches == 4 {
			t.Fatalf("%d batches, none sent in one round trip", batches)
		}
		var res []appendResult
		res, ids = ridingBatch(t, s, sessions)
		for i, r := range res {
			if r.err != nil {
				t.Fatalf("caller %d (%s): %v", i, sessions[i], r.err)
			}
		}
	}
	for i, id := range ids {
		var sid string
		if err := s.eng.pool.QueryRow(ctx, "SELECT session_id FROM messages WHERE id = $1", id).Scan(&sid); err != nil || sid != sessions[i] {
			t.Errorf("caller %d got id %d: session %q, %v; want its own row, of %s", i, id, sid, err, sessions[i])
		}
	}
	if diff := cmp.Diff(map[string]int{"a": 2 * batches, "b": batches, "c": batches}, messageCounts(t, s, "a", "b", "c")); diff != "" {
		t.Errorf("messages stored (-want +got):\n%s", diff)
	}
	for _, sid := range []string{"a", "b", "c"} {
		checkSessionRow(t, s, sid)
	}
}

// What the client told apart between two round trips, one round trip
// leaves to the server, and on a session held elsewhere or missing it
// sends nothing that stays: the batch goes the way of two round trips,
// where a held session waits aside for its lock and a missing one's
// caller alone gets ErrNotFound. Each caller's row is stored once,
// counted once.
func TestOneRound_HeldOrMissingSessionGoesTheWayOfTwo(t *testing.T) {
	s := storeWithSessions(t, "a", "b", "c")
	ctx := t.Context()
	a := s.eng.appends
	warmOneRound(t, s, "a", "c")

	t.Run("missing", func(t *testing.T) {
		before, checked := a.oneRounds.Load(), a.oneRoundsChecked.Load()
		counts := messageCounts(t, s, "a", "c")
		res, _ := ridingBatch(t, s, []string{"a", "nosuch", "c"})
		if res[0].err != nil || res[2].err != nil || !errors.Is(res[1].err, store.ErrNotFound) {
			t.Errorf("a, nosuch, c: %v, %v, %v; want nil, ErrNotFound, nil", res[0].err, res[1].err, res[2].err)
		}
		if got, refused := a.oneRounds.Load()-before, a.oneRoundsChecked.Load()-checked; got != 0 || refused != 1 {
			t.Errorf("%d batches sent in one round trip, %d refused by the server's checks; want 0 and 1", got, refused)
		}
		if diff := cmp.Diff(map[string]int{"a": counts["a"] + 1, "c": counts["c"] + 1}, messageCounts(t, s, "a", "c")); diff != "" {
			t.Errorf("messages stored (-want +got):\n%s", diff)
		}
	})

	t.Run("held", func(t *testing.T) {
		warmOneRound(t, s, "a", "c")
		before, checked := a.oneRounds.Load(), a.oneRoundsChecked.Load()
		counts := messageCounts(t, s, "a", "b", "c")
		// Another process: its own pool, so that the batch gets the
		// connection warmOneRound prepared.
		holder, err := openPool(t, testDSN(t), s.Schema()).Begin(ctx) //sessiondb:allow txonly -- plays another process holding the session row
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = holder.Rollback(context.Background()) }()
		if _, err := holder.Exec(ctx, "SELECT id FROM sessions WHERE id = 'b' FOR NO KEY UPDATE"); err != nil {
			t.Fatal(err)
		}
		sessions := []string{"a", "b", "c"}
		ids := make([]int64, len(sessions))
		var rs []*appendRequest
		for i, sid := range sessions {
			rs = append(rs, &appendRequest{ctx: ctx, sessionID: sid, fn: appendRiding(sid, sid, &ids[i]), patience: 10 * time.Second,
				deadline: time.Now().Add(10 * time.Second), done: make(chan appendResult, 1)})
		}
		a.runBatch(slices.Clone(rs), false)
		for _, i := range []int{0, 2} {
			select {
			case r := <-rs[i].done:
				if r.err != nil {
					t.Errorf("caller %s: %v", sessions[i], r.err)
				}
			default:
				t.Errorf("caller %s not answered while b was held", sessions[i])
			}
		}
		select {
		case r := <-rs[1].done:
			t.Fatalf("caller b answered (%v) while its session was held", r.err)
		default:
		}
		if err := holder.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-rs[1].done:
			if r.err != nil {
				t.Errorf("caller b: %v", r.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("caller b not answered once its session was free")
		}
		if got, refused := a.oneRounds.Load()-before, a.oneRoundsChecked.Load()-checked; got != 0 || refused != 1 {
			t.Errorf("%d batches sent in one round trip, %d refused by the server's checks; want 0 and 1", got, refused)
		}
		want := map[string]int{"a": counts["a"] + 1, "b": counts["b"] + 1, "c": counts["c"] + 1}
		if diff := cmp.Diff(want, messageCounts(t, s, "a", "b", "c")); diff != "" {
			t.Errorf("messages stored (-want +got):\n%s", diff)
		}
		for _, sid := range sessions {
			checkSessionRow(t, s, sid)
		}
	})
}

// Many callers at once through the store, on their own sessions and on
// shared ones: the batches go in one round trip, and every acknowledged
// message is stored once, with the id its caller got.
func TestOneRound_ConcurrentAppendsThroughTheStore(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	const callers, each = 12, 20
	for c := range callers / 2 {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: string(rune('a' + c)), Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	before := s.eng.appends.oneRounds.Load()
	var mu sync.Mutex
	acked := map[int64]string{}
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			sid := string(rune('a' + c%(callers/2)))
			for i := range each {
				content := sid + "-" + string(rune('A'+c)) + "-" + string(rune('0'+i%10)) + string(rune('0'+i/10))
				id, err := s.AppendMessage(ctx, sid, store.NewMessage{Role: "user", Content: content})
				if err != nil {
					t.Errorf("append %s: %v", content, err)
					continue
				}
				mu.Lock()
				acked[id] = content
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if s.eng.appends.oneRounds.Load() == before {
		t.Error("no batch went in one round trip")
	}
	rows, err := s.eng.pool.Query(ctx, "SELECT id, content FROM messages")
	if err != nil {
		t.Fatal(err)
	}
	stored := map[int64]string{}
	for rows.Next() {
		var id int64
		var content string
		if err := rows.Scan(&id, &content); err != nil {
			t.Fatal(err)
		}
		stored[id] = content
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(acked, stored); diff != "" {
		t.Errorf("stored against acknowledged (-acked +stored):\n%s", diff)
	}
	for c := range callers / 2 {
		checkSessionRow(t, s, string(rune('a'+c)))
	}
}
