package pg

// The domain's rules on the append path under concurrency, on a real
// server: appends run READ COMMITTED in shared transactions
// (appendbatch.go), and each rule below names the lock that keeps it
// (docs/ARCHITECTURE.md, "PostgreSQL: appends in shared transactions").
// Two stores on one schema stand for two processes: each has its own pool
// and its own batches.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
)

// twoStores opens two stores on one fresh schema, each with its own pool.
func twoStores(t *testing.T, opts Options) (*Store, *Store) {
	t.Helper()
	opts.Schema = freshSchema(t)
	var out [2]*Store
	for i := range out {
		s, err := Open(t.Context(), testDSN(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out[0], out[1]
}

// checkSessionRow compares a session's counters and last_message_at with
// its rows, read straight from the tables.
func checkSessionRow(t *testing.T, s *Store, id string) {
	t.Helper()
	var count, calls, rows, toolRows int64
	var last, newest *int64
	err := s.eng.pool.QueryRow(t.Context(), `SELECT message_count, tool_call_count, last_message_at,
		(SELECT count(*) FROM messages m WHERE m.session_id = s.id),
		(SELECT COALESCE(sum(json_array_length(CAST(m.tool_calls_json AS json))), 0) FROM messages m WHERE m.session_id = s.id),
		(SELECT max(created_at) FROM messages m WHERE m.session_id = s.id)
		FROM sessions s WHERE s.id = $1`, id).Scan(&count, &calls, &last, &rows, &toolRows, &newest)
	if err != nil {
		t.Fatal(err)
	}
	if count != rows || calls != toolRows {
		t.Errorf("session %s: message_count %d tool_call_count %d, rows hold %d messages %d tool calls", id, count, calls, rows, toolRows)
	}
	if (last == nil) != (newest == nil) || last != nil && *last != *newest {
		t.Errorf("session %s: last_message_at %v, newest message created at %v", id, derefInt(last), derefInt(newest))
	}
}

func derefInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// noServerText fails when err's text carries the server's wording: a
// caller gets typed errors, never SQLSTATE text.
func noServerText(t *testing.T, err error) {
	t.Helper()
	if err != nil && (strings.Contains(err.Error(), "SQLSTATE") || strings.Contains(err.Error(), "multixact")) {
		t.Errorf("raw server error reached the caller: %v", err)
	}
}

// Exactly-once keys: 32 goroutines in two stores resend the same keyed
// turns, in shuffled orders, into three sessions, a quarter of them three
// keys a call (one multi-row INSERT). Each key is one row,
// every caller of a key got that row's id, and the counters and
// last_message_at match the rows. Kept by the session row lock each
// batch takes before its first lookup (FOR NO KEY UPDATE, in id order):
// the lookup by key and the insert of one session never interleave with
// another transaction's.
func TestAppendKeysExactlyOnceAcrossStores(t *testing.T) {
	a, b := twoStores(t, Options{})
	ctx := t.Context()
	sessions := []string{"s1", "s2", "s3"}
	for _, id := range sessions {
		if _, err := a.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	const keys, workers = 40, 32
	// message is the one message under key k of session sessions[si],
	// whoever sends it.
	message := func(si, k int) store.NewMessage {
		key := fmt.Sprint("k", k)
		m := store.NewMessage{Role: store.RoleAssistant, Content: "turn " + key, IdempotencyKey: key,
			ToolCalls: []store.ToolCall{{ID: "c" + key, Name: "t", Arguments: "{}"}}}
		if (k*len(sessions)+si)%2 == 0 {
			m.Role, m.ToolCalls = store.RoleUser, nil
		}
		return m
	}
	var mu sync.Mutex
	got := map[string]int64{} // session/key → id
	record := func(sid string, ms []store.NewMessage, ids []int64) {
		mu.Lock()
		defer mu.Unlock()
		for i, m := range ms {
			if prev, ok := got[sid+"/"+m.IdempotencyKey]; ok && prev != ids[i] {
				t.Errorf("%s/%s: ids %d and %d for one key", sid, m.IdempotencyKey, prev, ids[i])
			}
			got[sid+"/"+m.IdempotencyKey] = ids[i]
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		s := []*Store{a, b}[w%2]
		wg.Go(func() {
			order := rand.Perm(keys * len(sessions))
			// Every fourth worker sends three keys of a session a call
			// (one multi-row INSERT of the new ones, insertbatch.go).
			each := 1 + 2*min(1, w%4/3)
			for i := 0; i < len(order); i += each {
				si := order[i] % len(sessions)
				var ms []store.NewMessage
				for j := i; j < min(i+each, len(order)); j++ {
					ms = append(ms, message(si, order[j]/len(sessions)))
				}
				ids, err := s.AppendMessages(ctx, sessions[si], ms)
				if err != nil {
					noServerText(t, err)
					t.Errorf("append %s/%v: %v", sessions[si], ms, err)
					return
				}
				record(sessions[si], ms, ids)
			}
		})
	}
	wg.Wait()
	for _, sid := range sessions {
		msgs, err := a.Messages(ctx, sid, store.MessageQuery{Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != keys {
			t.Errorf("session %s holds %d messages, want %d (one a key)", sid, len(msgs), keys)
		}
		checkSessionRow(t, a, sid)
	}
}

// Counters and last_message_at: appenders of two stores on their own
// and on shared sessions, with tool calls and explicit creation times out
// of order. message_count and tool_call_count are added to by an UPDATE
// under the row lock (read committed re-reads the row it waited for);
// last_message_at moves forward only, to the newest of the rows counted.
func TestAppendCountersUnderConcurrency(t *testing.T) {
	a, b := twoStores(t, Options{})
	ctx := t.Context()
	const sessions, workers, each = 6, 24, 30
	for i := range sessions {
		if _, err := a.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("c", i), Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Now().Add(-time.Hour)
	var wg sync.WaitGroup
	for w := range workers {
		s := []*Store{a, b}[w%2]
		wg.Go(func() {
			for i := range each {
				sid := fmt.Sprint("c", rand.IntN(sessions))
				ms := []store.NewMessage{
					{Role: store.RoleAssistant, Content: "calls", ToolCalls: []store.ToolCall{{ID: "x", Name: "t", Arguments: "{}"}, {ID: "y", Name: "t", Arguments: "{}"}}},
					{Role: store.RoleUser, Content: "dated", CreatedAt: base.Add(time.Duration(rand.IntN(3600)) * time.Second)},
				}
				if i%3 == 0 {
					ms = ms[:1]
				}
				if _, err := s.AppendMessages(ctx, sid, ms); err != nil {
					noServerText(t, err)
					t.Errorf("append to %s: %v", sid, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range sessions {
		checkSessionRow(t, a, fmt.Sprint("c", i))
	}
}

// Compression guard: appenders of two stores write to a parent while it
// is continued in a compression child. Every acknowledged append is in
// the parent, and those above the watermark were copied into the child;
// the parent holds nothing no one was told of; appends after the end get
// ErrSessionClosed. Kept by the parent's row: the append batch locks it
// first and its counter UPDATE re-checks end_reason under the lock (0
// rows: the append is refused and undone), while the SERIALIZABLE
// publish that ends it fails (40001, then reruns and copies the new rows)
// when an append's lock or update came first.
func TestAppendVersusCompressionChild(t *testing.T) {
	a, b := twoStores(t, Options{})
	ctx := t.Context()
	for round := range 3 {
		parent := fmt.Sprint("p", round)
		if _, err := a.CreateSession(ctx, store.NewSession{ID: parent, Source: "test"}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		acked := map[int64]string{}
		var closed atomic.Int64
		var stop atomic.Bool
		var wg sync.WaitGroup
		for w := range 16 {
			s := []*Store{a, b}[w%2]
			wg.Go(func() {
				for n := 0; !stop.Load(); n++ {
					content := fmt.Sprintf("w%d n%d", w, n)
					id, err := s.AppendMessage(ctx, parent, store.NewMessage{Role: store.RoleUser, Content: content})
					switch {
					case err == nil:
						mu.Lock()
						acked[id] = content
						mu.Unlock()
					case errors.Is(err, store.ErrSessionClosed):
						closed.Add(1)
						return
					default:
						noServerText(t, err)
						t.Errorf("append: %v", err)
						return
					}
				}
			})
		}
		time.Sleep(100 * time.Millisecond)
		if _, ok, err := a.AcquireCompressionLock(ctx, parent, "compressor", time.Minute); err != nil || !ok {
			t.Fatalf("compression lock: %v, %v", ok, err)
		}
		mark, err := a.ActiveWatermark(ctx, parent)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // appends land above the watermark
		child, err := a.PublishCompressionChild(ctx, parent, store.Continuation{Holder: "compressor", Watermark: mark,
			Messages: []store.NewMessage{{Role: store.RoleUser, Content: "summary", Summary: true}}})
		if err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("publish: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
		stop.Store(true)
		wg.Wait()

		inParent, err := a.Messages(ctx, parent, store.MessageQuery{Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		held := map[int64]string{}
		for _, m := range inParent {
			held[m.ID] = m.Content
			if _, ok := acked[m.ID]; !ok {
				t.Errorf("round %d: parent holds message %d (%q) no caller was told of", round, m.ID, m.Content)
			}
		}
		inChild, err := a.Messages(ctx, child.ID, store.MessageQuery{Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		copied := map[string]bool{}
		for _, m := range inChild {
			copied[m.Content] = true
		}
		for id, content := range acked {
			if held[id] != content {
				t.Errorf("round %d: acknowledged message %d (%q) is not in the parent", round, id, content)
			}
			if id > mark && !copied[content] {
				t.Errorf("round %d: acknowledged message %d (%q) above the watermark %d was not copied into the child", round, id, content, mark)
			}
		}
		checkSessionRow(t, a, parent)
		checkSessionRow(t, a, child.ID)
		t.Logf("round %d: %d appends acknowledged, %d refused after the end", round, len(acked), closed.Load())
	}
}

// Per-caller outcomes: in batches shared with good appends, callers that
// fail — a missing session, a key reused for a different message — get
// their own typed error and take no one's write with them.
func TestAppendFailingCallersAlone(t *testing.T) {
	a, b := twoStores(t, Options{})
	ctx := t.Context()
	for _, id := range []string{"good", "keyed"} {
		if _, err := a.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.AppendMessage(ctx, "keyed", store.NewMessage{Role: store.RoleUser, Content: "first", IdempotencyKey: "k"}); err != nil {
		t.Fatal(err)
	}
	var good atomic.Int64
	var wg sync.WaitGroup
	for w := range 24 {
		s := []*Store{a, b}[w%2]
		wg.Go(func() {
			for n := range 20 {
				var err error
				switch w % 3 {
				case 0:
					_, err = s.AppendMessage(ctx, "good", store.NewMessage{Role: store.RoleUser, Content: fmt.Sprint(w, n)})
					if err == nil {
						good.Add(1)
					}
				case 1:
					_, err = s.AppendMessage(ctx, "missing", store.NewMessage{Role: store.RoleUser, Content: "x"})
					if !errors.Is(err, store.ErrNotFound) {
						t.Errorf("append to a missing session: %v, want ErrNotFound", err)
					}
					err = nil
				case 2:
					_, err = s.AppendMessage(ctx, "keyed", store.NewMessage{Role: store.RoleUser, Content: "different", IdempotencyKey: "k"})
					var conflict *store.IdempotencyConflictError
					if !errors.As(err, &conflict) {
						t.Errorf("a key reused for a different message: %v, want *IdempotencyConflictError", err)
					}
					err = nil
				}
				if err != nil {
					noServerText(t, err)
					t.Errorf("good append: %v", err)
				}
			}
		})
	}
	wg.Wait()
	msgs, err := a.Messages(ctx, "good", store.MessageQuery{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(msgs)) != good.Load() {
		t.Errorf("good session holds %d messages, %d were acknowledged", len(msgs), good.Load())
	}
	checkSessionRow(t, a, "good")
	checkSessionRow(t, a, "keyed")
}

// Patience and deadlines while another transaction holds a session's row:
// an append whose own context ends gets its context's error, one whose
// patience ends gets ErrLocked; neither carries the server's text, and
// appends to other sessions, batched with them, go through.
func TestAppendWhileSessionRowHeld(t *testing.T) {
	s := openTestStore(t, Options{WritePatience: 300 * time.Millisecond, TranscriptPatience: 400 * time.Millisecond})
	ctx := t.Context()
	for _, id := range []string{"held", "free"} {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := ParseConfig(testDSN(t), s.Schema())
	if err != nil {
		t.Fatal(err)
	}
	side, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close(context.Background())
	tx, err := side.Begin(ctx) //sessiondb:allow txonly -- plays another process holding the session row
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM sessions WHERE id = 'held' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { // patience runs out
		_, err := s.AppendMessage(ctx, "held", store.NewMessage{Role: store.RoleUser, Content: "patience"})
		if !errors.Is(err, store.ErrLocked) {
			t.Errorf("append past its patience: %v, want ErrLocked", err)
		}
		noServerText(t, err)
	})
	wg.Go(func() { // the caller's own deadline
		dctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := s.AppendMessage(dctx, "held", store.NewMessage{Role: store.RoleUser, Content: "deadline"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("append past its context's deadline: %v, want context.DeadlineExceeded", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("append past its context's deadline returned after %v", took)
		}
		noServerText(t, err)
	})
	for range 8 {
		wg.Go(func() {
			if _, err := s.AppendMessage(ctx, "free", store.NewMessage{Role: store.RoleUser, Content: "free"}); err != nil {
				t.Errorf("append to a session no one holds: %v", err)
			}
		})
	}
	wg.Wait()
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(ctx, "held", store.NewMessage{Role: store.RoleUser, Content: "after"}); err != nil {
		t.Fatalf("append once the row is free: %v", err)
	}
	msgs, err := s.Messages(ctx, "held", store.MessageQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Content != "after" {
		t.Errorf("held session holds %v, want only the append made after the row was free", msgs)
	}
	checkSessionRow(t, s, "held")
	checkSessionRow(t, s, "free")
}

// runOneBatch runs fns (an append callback per session, in order) as one
// batch of s's appender, the way a leader does, and returns each
// caller's result.
func runOneBatch(t *testing.T, s *Store, sessions []string, fns []func(context.Context, driver.Executor) error) []appendResult {
	t.Helper()
	var rs []*appendRequest
	for i, sid := range sessions {
		rs = append(rs, &appendRequest{ctx: t.Context(), sessionID: sid, fn: fns[i], patience: 10 * time.Second,
			deadline: time.Now().Add(10 * time.Second), done: make(chan appendResult, 1)})
	}
	s.eng.appends.runBatch(slices.Clone(rs), false)
	out := make([]appendResult, len(rs))
	for i, r := range rs {
		select {
		case out[i] = <-r.done:
		default:
			t.Fatalf("caller %d (%s) was not answered", i, sessions[i])
		}
	}
	return out
}

// Per-caller outcomes inside one batch, run deterministically (the
// leader's path, pipelined across sessions): a caller whose session is
// missing, one whose callback fails after its insert, and one that panics
// each get their own outcome, with nothing of theirs kept, while every
// other caller's message is committed and counted.
func TestAppendBatchCallersFailAlone(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	appendTo := func(sid, content string, fail func() error) func(context.Context, driver.Executor) error {
		return func(ctx context.Context, tx driver.Executor) error {
			if _, err := tx.MessageInsert(ctx, driver.MessageInsertParams{SessionID: sid, Role: "user", Content: content, CreatedAt: time.Now().UnixMilli()}); err != nil {
				return err
			}
			if fail != nil {
				if err := fail(); err != nil {
					return err
				}
			}
			n, err := tx.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{ID: sid, Messages: 1})
			if err == nil && n == 0 {
				err = store.ErrNotFound
			}
			return err
		}
	}
	for _, tc := range []struct {
		name     string
		sessions []string
		fail     []func() error
		want     []string // "" ok, "notfound", "boom", "panic"
	}{
		{"one missing session among good ones", []string{"a", "missing", "b", "c"}, nil, []string{"", "notfound", "", ""}},
		{"a callback failing after its insert", []string{"a", "b", "c", "a"}, []func() error{nil, func() error { return boom }, nil, nil}, []string{"", "boom", "", ""}},
		{"a callback panicking", []string{"a", "b", "c"}, []func() error{nil, nil, func() error { panic("callback panic") }}, []string{"", "", "panic"}},
		{"alone and missing", []string{"missing"}, nil, []string{"notfound"}},
		// A lone append runs alone in its transaction: its failure is
		// answered at once, nothing of it kept.
		{"alone, failing after its insert", []string{"a"}, []func() error{func() error { return boom }}, []string{"boom"}},
		{"alone, panicking", []string{"b"}, []func() error{func() error { panic("callback panic") }}, []string{"panic"}},
		{"alone", []string{"c"}, nil, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := map[string]int{}
			for _, sid := range []string{"a", "b", "c"} {
				msgs, _ := s.Messages(ctx, sid, store.MessageQuery{Limit: 1000})
				before[sid] = len(msgs)
			}
			fns := make([]func(context.Context, driver.Executor) error, len(tc.sessions))
			for i, sid := range tc.sessions {
				var fail func() error
				if tc.fail != nil {
					fail = tc.fail[i]
				}
				fns[i] = appendTo(sid, fmt.Sprint(tc.name, i), fail)
			}
			res := runOneBatch(t, s, tc.sessions, fns)
			added := map[string]int{}
			for i, r := range res {
				got := ""
				switch {
				case r.panicked != nil:
					got = "panic"
				case errors.Is(r.err, store.ErrNotFound):
					got = "notfound"
				case errors.Is(r.err, boom):
					got = "boom"
				case r.err != nil:
					got = r.err.Error()
				}
				if got != tc.want[i] {
					t.Errorf("caller %d (%s): got %q, want %q", i, tc.sessions[i], got, tc.want[i])
				}
				if got == "" {
					added[tc.sessions[i]]++
				}
			}
			for _, sid := range []string{"a", "b", "c"} {
				msgs, err := s.Messages(ctx, sid, store.MessageQuery{Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				if len(msgs) != before[sid]+added[sid] {
					t.Errorf("session %s: %d messages, want %d (before) + %d (acknowledged)", sid, len(msgs), before[sid], added[sid])
				}
				checkSessionRow(t, s, sid)
			}
		})
	}
}
