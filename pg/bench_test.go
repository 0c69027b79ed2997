package pg

// Benchmarks of the PostgreSQL engine, beside the SQLite engine's (bench/
// and db/search_bench_test.go: the same workloads, messages and corpus)
// and a raw pgx loop doing the same statements. They need a server:
//
//	SESSIONDB_PG_DSN='host=/tmp/… port=55432 user=postgres dbname=postgres' \
//	  go test -run '^$' -bench . -benchtime 2000x ./...
//
// Without SESSIONDB_PG_DSN they skip, under CI=true too: CI's test pass
// runs no benchmarks (-bench is never given there), so a skip cannot hide
// a measurement it owes. Figures, ratios and what bounds them:
// docs/PERFORMANCE.md, "PostgreSQL beside SQLite".

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/internal/benchcorpus"
	"github.com/sessiondb/sessiondb/store"
)

// benchDSN is the server the benchmarks run on; without one they skip.
func benchDSN(b *testing.B) string {
	b.Helper()
	dsn := os.Getenv("SESSIONDB_PG_DSN")
	if dsn == "" {
		b.Skip("SESSIONDB_PG_DSN is not set: point it at a server (scripts/pg-cluster.sh starts a throwaway one)")
	}
	return dsn
}

// rerunCounter counts the statements the server refused with a
// serialization failure or a deadlock: each is a transaction the engine's
// Write rolled back and ran again (or, with patience spent, gave up on).
// It is a pgx tracer, so it counts at the client without the engine's help.
type rerunCounter struct{ n atomic.Int64 }

func (c *rerunCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (c *rerunCounter) TraceQueryEnd(_ context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	if retryable(d.Err) {
		c.n.Add(1)
	}
}

// benchPool opens a pool of conns connections (0: the engine's default)
// on a fresh schema of the benchmark server, counting reruns in reruns.
func benchPool(b *testing.B, conns int, reruns *rerunCounter) *pgxpool.Pool {
	b.Helper()
	dsn := benchDSN(b)
	return benchPoolIn(b, dsn, freshSchema(b), conns, reruns)
}

func benchPoolIn(b *testing.B, dsn, schema string, conns int, reruns *rerunCounter) *pgxpool.Pool {
	b.Helper()
	cfg, err := ParseConfig(dsn, schema)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = defaultMaxConns
	if conns > 0 {
		cfg.MaxConns = int32(conns)
	}
	if reruns != nil {
		cfg.ConnConfig.Tracer = reruns
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return pool
}

// benchStore opens a store on pool holding the empty session "bench".
func benchStore(b *testing.B, pool *pgxpool.Pool) *Store {
	b.Helper()
	s, err := OpenPool(context.Background(), pool, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.CreateSession(context.Background(), store.NewSession{ID: "bench", Source: "bench"}); err != nil {
		b.Fatal(err)
	}
	return s
}

// benchMessage is the i-th message every append workload appends, the
// SQLite benchmarks' message (bench/run.go).
func benchMessage(i int) store.NewMessage {
	return store.NewMessage{Role: store.RoleUser, Content: fmt.Sprintf("message %d: the quick brown fox jumps over the lazy dog", i)}
}

// opStats are one concurrent workload's figures.
type opStats struct {
	perSecond float64
	p50, p99  time.Duration
}

// runOps runs op b.N times from workers goroutines sharing the count;
// op is told which worker w runs its i-th call.
func runOps(b *testing.B, workers int, op func(w, i int) error) opStats {
	b.Helper()
	var next atomic.Int64
	lat := make([][]time.Duration, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for i := int(next.Add(1)); i <= b.N; i = int(next.Add(1)) {
				t := time.Now()
				if err := op(w, i); err != nil {
					errs[w] = err
					return
				}
				lat[w] = append(lat[w], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	return opStats{perSecond: float64(b.N) / elapsed.Seconds(), p50: all[len(all)/2], p99: all[len(all)*99/100]}
}

func (r opStats) report(b *testing.B, reruns *rerunCounter) {
	b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(r.perSecond, "msgs/s")
	if reruns != nil {
		b.ReportMetric(float64(reruns.n.Load())/float64(b.N), "reruns/msg")
	}
}

// reportBatches adds the append batches' figures: messages a transaction
// and transactions run again a message (appendbatch.go).
func reportBatches(b *testing.B, s *Store, before [3]int64) {
	a := s.eng.appends
	batches, appends, reruns := a.batches.Load()-before[0], a.appends.Load()-before[1], a.reruns.Load()-before[2]
	if batches > 0 {
		b.ReportMetric(float64(appends)/float64(batches), "msgs/txn")
	}
	b.ReportMetric(float64(reruns)/float64(b.N), "batch-reruns/msg")
}

func batchCounts(s *Store) [3]int64 {
	a := s.eng.appends
	return [3]int64{a.batches.Load(), a.appends.Load(), a.reruns.Load()}
}

// BenchmarkAppendMessage_OwnSessions runs N appenders, each on a session
// of its own, on the default pool: the SQLite benchmark of the same name
// (bench/), a gateway serving many conversations.
func BenchmarkAppendMessage_OwnSessions(b *testing.B) {
	for _, n := range []int{8, 16, 64} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) { benchAppend(b, 0, n, false, true) })
	}
}

// BenchmarkAppendMessage_OwnSessionsKeyed is OwnSessions with an
// idempotency key on every message, as a gateway that resends sends them:
// a lookup by key before each insert.
func BenchmarkAppendMessage_OwnSessionsKeyed(b *testing.B) {
	for _, n := range []int{16, 64} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) { benchAppend(b, 0, n, true, true) })
	}
}

// BenchmarkAppendMessage_Concurrent runs N appenders sharing b.N
// AppendMessage calls on one session, each call its own transaction, on
// the default pool — the SQLite benchmark of the same name. keyed=true
// gives every message an idempotency key (a lookup by key before the
// insert, the unique index on insert).
func BenchmarkAppendMessage_Concurrent(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		for _, n := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("keyed=%t/appenders=%d", keyed, n), func(b *testing.B) {
				benchAppend(b, 0, n, keyed, false)
			})
		}
	}
}

// BenchmarkAppendMessage_PoolSize measures the pool sizes the default was
// chosen among (defaultMaxConns): sessions=one is the SQLite benchmarks'
// workload (every appender on one conversation, whose counter row they
// all update), sessions=own gives each appender a conversation of its
// own, as a gateway serving many users does.
func BenchmarkAppendMessage_PoolSize(b *testing.B) {
	for _, own := range []bool{false, true} {
		for _, conns := range []int{4, 16, 32} {
			for _, n := range []int{16, 64} {
				b.Run(fmt.Sprintf("sessions=%s/conns=%d/appenders=%d", map[bool]string{false: "one", true: "own"}[own], conns, n),
					func(b *testing.B) { benchAppend(b, conns, n, false, own) })
			}
		}
	}
}

// benchAppend runs appenders AppendMessage loops on a pool of conns
// connections (0: the default), on session "bench" or, with ownSessions,
// each on a session of its own.
func benchAppend(b *testing.B, conns, appenders int, keyed, ownSessions bool) {
	var reruns rerunCounter
	s := benchStore(b, benchPool(b, conns, &reruns))
	ctx := context.Background()
	sessions := make([]string, appenders)
	for w := range sessions {
		sessions[w] = "bench"
		if ownSessions {
			sessions[w] = fmt.Sprintf("bench-%d", w)
			if _, err := s.CreateSession(ctx, store.NewSession{ID: sessions[w], Source: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	reruns.n.Store(0)
	before := batchCounts(s)
	cpu := serverCPU(b, s.eng.pool)
	cpuBefore := cpu()
	r := runOps(b, appenders, func(w, i int) error {
		m := benchMessage(i)
		if keyed {
			m.IdempotencyKey = fmt.Sprintf("bench-%d", i)
		}
		_, err := s.AppendMessage(ctx, sessions[w], m)
		return err
	})
	r.report(b, &reruns)
	reportBatches(b, s, before)
	reportServerCPU(b, cpuBefore, cpu())
}

// BenchmarkAppendMessages_ToolExchange runs N appenders, each on a
// session of its own, each call a tool exchange (a user turn, an
// assistant calling two tools, both results, the answer: five rows, one
// MessageInsertMany) — the SQLite benchmark of the same name, concurrent.
func BenchmarkAppendMessages_ToolExchange(b *testing.B) {
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) {
			s := benchStore(b, benchPool(b, 0, nil))
			ctx := context.Background()
			for w := range n {
				if _, err := s.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("bench-", w), Source: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
			before := batchCounts(s)
			cpu := serverCPU(b, s.eng.pool)
			cpuBefore := cpu()
			r := runOps(b, n, func(w, i int) error {
				_, err := s.AppendMessages(ctx, fmt.Sprint("bench-", w), benchcorpus.ToolExchange(i))
				return err
			})
			b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99-ms")
			b.ReportMetric(5*r.perSecond, "msgs/s")
			reportBatches(b, s, before)
			if after := cpu(); cpuBefore >= 0 && after >= 0 {
				b.ReportMetric((after-cpuBefore)*1e6/float64(5*b.N), "server-µs/msg")
			}
		})
	}
}

// BenchmarkRawPgx_BatchedAppend is the ceiling of group commit by hand:
// appenders, each on a session of its own, hand their message to one
// committer goroutine, which sends everything queued as one pgx.Batch —
// BEGIN, each INSERT and counter UPDATE, COMMIT — in one round trip and
// one WAL flush, and answers them. No idempotency lookup, no savepoints,
// no per-caller outcome: the least work a batch of appends can be. The
// SQL is written here by hand, as in BenchmarkRawPgx_Append.
func BenchmarkRawPgx_BatchedAppend(b *testing.B) {
	for _, n := range []int{16, 64} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) {
			pool := benchPool(b, 0, nil)
			s := benchStore(b, pool)
			ctx := context.Background()
			for w := range n {
				if _, err := s.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("bench-", w), Source: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
			type req struct {
				session string
				m       store.NewMessage
				done    chan error
			}
			queue := make(chan req, n)
			stop := make(chan struct{})
			var committer sync.WaitGroup
			committer.Go(func() {
				for {
					var batch []req
					select {
					case r := <-queue:
						batch = append(batch, r)
					case <-stop:
						return
					}
				drain:
					for {
						select {
						case r := <-queue:
							batch = append(batch, r)
						default:
							break drain
						}
					}
					var pb pgx.Batch
					pb.Queue("BEGIN") //sessiondb:allow txonly -- the raw ceiling the engine is measured against
					for _, r := range batch {
						pb.Queue(`INSERT INTO messages (session_id, role, content, is_summary, created_at) VALUES ($1, $2, $3, 0, $4)`,
							r.session, string(r.m.Role), r.m.Content, time.Now().UnixMilli())
						pb.Queue(`UPDATE sessions SET message_count = message_count + 1 WHERE id = $1`, r.session)
					}
					pb.Queue("COMMIT") //sessiondb:allow txonly -- as above
					err := pool.SendBatch(ctx, &pb).Close()
					for _, r := range batch {
						r.done <- err
					}
				}
			})
			cpu := serverCPU(b, pool)
			cpuBefore := cpu()
			r := runOps(b, n, func(w, i int) error {
				done := make(chan error, 1)
				queue <- req{session: fmt.Sprint("bench-", w), m: benchMessage(i), done: done}
				return <-done
			})
			cpuAfter := cpu()
			close(stop)
			committer.Wait()
			r.report(b, nil)
			reportServerCPU(b, cpuBefore, cpuAfter)
		})
	}
}

// BenchmarkRawPgx_Append is the baseline for AppendMessage: a loop on a
// pgxpool of the engine's default size doing the statements an append
// runs — the session check, the message INSERT and the session counter
// UPDATE — in one transaction per message, statements prepared by pgx's
// statement cache, nothing else. The SQL is written here by hand, not
// generated: it is the engine's queries, restated without the engine.
// iso=read-committed is what a hand-written loop would use (PostgreSQL's
// default: a second appender waits for the session row's lock, then
// updates it); iso=serializable is the engine's isolation, with its
// backoff between reruns, to tell the isolation's cost from the engine's.
func BenchmarkRawPgx_Append(b *testing.B) {
	for _, iso := range []pgx.TxIsoLevel{pgx.ReadCommitted, pgx.Serializable} {
		for _, n := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("iso=%s/appenders=%d", isoName(iso), n), func(b *testing.B) {
				var reruns rerunCounter
				pool := benchPool(b, 0, &reruns)
				benchStore(b, pool) // the schema and the session "bench"
				ctx := context.Background()
				reruns.n.Store(0)
				r := runOps(b, n, func(_, i int) error {
					for attempt := 0; ; attempt++ {
						err := rawAppend(ctx, pool, iso, benchMessage(i))
						if err == nil || !retryable(err) {
							return err
						}
						time.Sleep(backoff(attempt))
					}
				})
				r.report(b, &reruns)
			})
		}
	}
}

func isoName(iso pgx.TxIsoLevel) string {
	if iso == pgx.Serializable {
		return "serializable"
	}
	return "read-committed"
}

// rawAppend is one append by hand: the session check, the INSERT and the
// counter UPDATE in one transaction.
func rawAppend(ctx context.Context, pool *pgxpool.Pool, iso pgx.TxIsoLevel, m store.NewMessage) error {
	//sessiondb:allow txonly -- the raw loop the engine is measured against, not a write path
	return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: iso}, func(tx pgx.Tx) error {
		var reason *string
		if err := tx.QueryRow(ctx, `SELECT end_reason FROM sessions WHERE id = $1`, "bench").Scan(&reason); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO messages (session_id, role, content, is_summary, created_at)
			VALUES ($1, $2, $3, 0, $4) RETURNING id`, "bench", string(m.Role), m.Content, time.Now().UnixMilli()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + 0
			WHERE id = $1`, "bench")
		return err
	})
}

// fill20k makes a store holding one 20,000-message session, appended in
// batches of 1,000 as the SQLite benchmark does.
func fill20k(b *testing.B) (*Store, *pgxpool.Pool) {
	b.Helper()
	pool := benchPool(b, 0, nil)
	s := benchStore(b, pool)
	batch := make([]store.NewMessage, 1000)
	for k := range 20 {
		for i := range batch {
			batch[i] = benchMessage(k*1000 + i)
		}
		if _, err := s.AppendMessages(context.Background(), "bench", batch); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := pool.Exec(context.Background(), "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	return s, pool
}

// BenchmarkMessages_20k reads a 20,000-message session through the API.
func BenchmarkMessages_20k(b *testing.B) {
	s, _ := fill20k(b)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		ms, err := s.Messages(ctx, "bench", store.MessageQuery{Limit: 20000})
		if err != nil || len(ms) != 20000 {
			b.Fatal(len(ms), err)
		}
	}
}

// rawMessage is what a hand-written loader keeps of a row.
type rawMessage struct {
	id, createdAt                     int64
	sessionID, role, content, state   string
	toolName, toolCallID, toolCalls   *string
	reasoning, finishReason, idemKey  *string
	tokenCount                        *int64
	isSummary                         int64
	originID                          *int64
	reasoningDetails, platformMessage *string
}

// BenchmarkRawSelect_20k loads the same rows with one SELECT into a slice
// on the same pool, as a hand-written loader would: the baseline for
// Messages (which reads in a REPEATABLE READ READ ONLY snapshot).
func BenchmarkRawSelect_20k(b *testing.B) {
	_, pool := fill20k(b)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		rows, err := pool.Query(ctx, `SELECT id, session_id, role, content, tool_name, tool_call_id, tool_calls_json,
			reasoning, finish_reason, token_count, state, is_summary, idempotency_key, created_at, origin_id,
			reasoning_details, platform_message_id
			FROM messages WHERE session_id = $1 AND state <> 'rewound' ORDER BY id LIMIT 20000`, "bench")
		if err != nil {
			b.Fatal(err)
		}
		out := make([]rawMessage, 0, 20000)
		for rows.Next() {
			var m rawMessage
			if err := rows.Scan(&m.id, &m.sessionID, &m.role, &m.content, &m.toolName, &m.toolCallID, &m.toolCalls,
				&m.reasoning, &m.finishReason, &m.tokenCount, &m.state, &m.isSummary, &m.idemKey, &m.createdAt,
				&m.originID, &m.reasoningDetails, &m.platformMessage); err != nil {
				b.Fatal(err)
			}
			out = append(out, m)
		}
		if err := rows.Err(); err != nil || len(out) != 20000 {
			b.Fatal(len(out), err)
		}
	}
}

// searchCorpusSchema holds the 100k-message corpus between runs on the
// same server: filling it takes minutes, and alternating runs want the
// same rows each time. It is refilled when it holds anything else.
const searchCorpusSchema = "bench_corpus_100k"

// BenchmarkSearch100k runs benchcorpus's query mix round-robin on its
// 100,000-message corpus for each sort, reporting latency percentiles —
// db's BenchmarkSearch100k on this engine.
func BenchmarkSearch100k(b *testing.B) {
	const n = 100_000
	dsn := benchDSN(b)
	ctx := context.Background()
	pool := benchPoolIn(b, dsn, searchCorpusSchema, 0, nil)
	s, err := OpenPool(ctx, pool, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var have int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM messages").Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have != n {
		s.Close()
		if _, err := pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{searchCorpusSchema}.Sanitize()+" CASCADE"); err != nil {
			b.Fatal(err)
		}
		pool.Reset() // the connections' prepared statements name the dropped tables
		if s, err = OpenPool(ctx, pool, Options{}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := benchcorpus.Fill(ctx, s.Store, n); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
			b.Fatal(err)
		}
		b.Logf("filled %d messages in %v", n, time.Since(start).Round(time.Millisecond))
	}
	for _, sort := range []store.SearchSort{store.SortRelevance, store.SortNewest} {
		b.Run(sort.String(), func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := benchcorpus.Queries[i%len(benchcorpus.Queries)]
				i++
				t := time.Now()
				if _, err := s.Search(ctx, q, store.SearchOptions{Sort: sort}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkWriteGuard measures what every write pays for the foreign
// schema guard (guard.go): guard=false runs an empty transaction as a
// write begins it, guard=true the same with the store's tables locked in
// its BEGIN and the guard's catalog read. Neither writes, so the disk's
// sync is not in it: the difference is the guard's whole cost.
func BenchmarkWriteGuard(b *testing.B) {
	s := benchStore(b, benchPool(b, 0, nil))
	ctx := context.Background()
	for _, guard := range []bool{false, true} {
		b.Run(fmt.Sprintf("guard=%t", guard), func(b *testing.B) {
			begin := "BEGIN ISOLATION LEVEL SERIALIZABLE; SET LOCAL lock_timeout = 1000; SET LOCAL statement_timeout = 1000"
			if guard {
				begin += "; " + s.eng.guard.lockTables
			}
			for b.Loop() {
				tx, err := s.eng.pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: begin}) //sessiondb:allow txonly -- measures the BEGIN a write sends
				if err != nil {
					b.Fatal(err)
				}
				if guard {
					if err := s.eng.guard.check(ctx, tx); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
