package db

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// BenchmarkConfig sizes RunBenchmark. The zero value is a quick run.
type BenchmarkConfig struct {
	Appends   int   // appends per append workload (default 2000)
	Appenders []int // concurrent appender counts (default 1, 4, 16, 64)
	ReadRows  int   // rows in the read workload (default 20000)
}

// BenchmarkResult is one workload's figures, with its baseline where it
// has one (the raw driver doing the same work with the same pragmas).
type BenchmarkResult struct {
	Name       string
	Ops        int
	PerSecond  float64
	P50, P99   time.Duration
	Baseline   string  // the baseline workload's name, if any
	BaselineOp float64 // the baseline's ops per second
}

// Ratio is PerSecond over the baseline's (0 without a baseline).
func (r BenchmarkResult) Ratio() float64 {
	if r.BaselineOp == 0 {
		return 0
	}
	return r.PerSecond / r.BaselineOp
}

// RunBenchmark measures the store in dir (fresh databases are created
// there): serial appends against the raw driver, concurrent appenders
// (group commit), 10-message batches, reading a long session against a
// raw loader, searching and exporting it, and Open. progress, if set, is told each workload's name.
// `sessiondb bench` prints its result; `go test -bench` in db/ measures
// the same workloads for benchstat.
func RunBenchmark(ctx context.Context, dir string, cfg BenchmarkConfig, progress func(string)) ([]BenchmarkResult, error) {
	if cfg.Appends <= 0 {
		cfg.Appends = 2000
	}
	if len(cfg.Appenders) == 0 {
		cfg.Appenders = []int{1, 4, 16, 64}
	}
	if cfg.ReadRows <= 0 {
		cfg.ReadRows = 20000
	}
	if progress == nil {
		progress = func(string) {}
	}
	n := 0
	fresh := func() (*Store, error) {
		n++
		s, err := Open(ctx, filepath.Join(dir, fmt.Sprintf("bench-%d.db", n)), Options{})
		if err != nil {
			return nil, err
		}
		if _, err := s.CreateSession(ctx, NewSession{ID: "bench", Source: "bench"}); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	var out []BenchmarkResult

	progress("raw driver, serial")
	raw, err := func() (BenchmarkResult, error) {
		s, err := fresh()
		if err != nil {
			return BenchmarkResult{}, err
		}
		path := s.Path()
		s.Close()
		d, err := openDB(path, kindWriter, 1, "")
		if err != nil {
			return BenchmarkResult{}, err
		}
		defer d.Close()
		c, err := d.Conn(ctx)
		if err != nil {
			return BenchmarkResult{}, err
		}
		defer c.Close()
		ra, err := newRawAppender(ctx, c)
		if err != nil {
			return BenchmarkResult{}, err
		}
		defer ra.close()
		return timeOps("raw driver append, serial", cfg.Appends, 1, func(i int) error { return ra.append(ctx, i) })
	}()
	if err != nil {
		return nil, err
	}
	for _, appenders := range cfg.Appenders {
		name := fmt.Sprintf("append, %d appender(s)", appenders)
		progress(name)
		s, err := fresh()
		if err != nil {
			return nil, err
		}
		r, err := timeOps(name, cfg.Appends, appenders, func(i int) error {
			_, err := s.AppendMessage(ctx, "bench", benchMessage(i))
			return err
		})
		s.Close()
		if err != nil {
			return nil, err
		}
		r.Baseline, r.BaselineOp = raw.Name, raw.PerSecond
		out = append(out, r)
	}
	out = append(out, raw)

	progress("append batches of 10")
	s, err := fresh()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	batch := make([]NewMessage, 10)
	for i := range batch {
		batch[i] = benchMessage(i)
	}
	r, err := timeOps("append batches of 10 (msgs)", cfg.Appends/10, 1, func(int) error {
		_, err := s.AppendMessages(ctx, "bench", batch)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.Ops, r.PerSecond = r.Ops*10, r.PerSecond*10
	out = append(out, r)

	progress(fmt.Sprintf("read %d messages", cfg.ReadRows))
	for filled := 0; filled < cfg.ReadRows; filled += 1000 {
		page := make([]NewMessage, min(1000, cfg.ReadRows-filled))
		for i := range page {
			page[i] = benchMessage(filled + i)
		}
		if _, err := s.AppendMessages(ctx, "bench", page); err != nil {
			return nil, err
		}
	}
	// The session now holds the batches above too: read exactly ReadRows.
	rawRead, err := timeOps(fmt.Sprintf("raw loader, %d rows", cfg.ReadRows), 20, 1, func(int) error {
		return rawLoad(ctx, s.readers, cfg.ReadRows)
	})
	if err != nil {
		return nil, err
	}
	read, err := timeOps(fmt.Sprintf("Messages, %d rows", cfg.ReadRows), 20, 1, func(int) error {
		_, err := s.Messages(ctx, "bench", MessageQuery{Limit: cfg.ReadRows})
		return err
	})
	if err != nil {
		return nil, err
	}
	read.Baseline, read.BaselineOp = rawRead.Name, rawRead.PerSecond
	out = append(out, read, rawRead)

	progress(fmt.Sprintf("search %d messages", cfg.ReadRows))
	queries := []string{"fox", "lazy dog", `"jumps over"`, "quick brown fox"}
	search, err := timeOps(fmt.Sprintf("Search, %d messages", cfg.ReadRows), 200, 1, func(i int) error {
		_, err := s.Search(ctx, queries[i%len(queries)], SearchOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	out = append(out, search)

	progress(fmt.Sprintf("export %d messages", cfg.ReadRows))
	export, err := timeOps(fmt.Sprintf("Export, %d messages (msgs)", cfg.ReadRows), 1, 1, func(int) error {
		_, err := s.Export(ctx, io.Discard, ExportOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	export.Ops, export.PerSecond = cfg.ReadRows, export.PerSecond*float64(cfg.ReadRows)
	out = append(out, export)

	progress("open an existing store")
	path := s.Path()
	o, err := timeOps("Open of an existing store", 50, 1, func(int) error {
		s, err := Open(ctx, path, Options{})
		if err != nil {
			return err
		}
		return s.Close()
	})
	if err != nil {
		return nil, err
	}
	return append(out, o), nil
}

// timeOps runs op ops times from workers goroutines and measures it.
func timeOps(name string, ops, workers int, op func(i int) error) (BenchmarkResult, error) {
	var next atomic.Int64
	lat := make([][]time.Duration, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for i := int(next.Add(1)); i <= ops; i = int(next.Add(1)) {
				t := time.Now()
				if err := op(i); err != nil {
					errs[w] = err
					return
				}
				lat[w] = append(lat[w], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return BenchmarkResult{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := BenchmarkResult{Name: name, Ops: ops, PerSecond: float64(ops) / elapsed.Seconds()}
	if len(all) > 0 {
		r.P50, r.P99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r, nil
}

func benchMessage(i int) NewMessage {
	return NewMessage{Role: RoleUser, Content: fmt.Sprintf("message %d: the quick brown fox jumps over the lazy dog", i)}
}

// rawAppender does what AppendMessage does — BEGIN IMMEDIATE, the session
// check, the insert (its trigger queues the row for indexing), the counter
// update, indexing the queued row, COMMIT — with the bare driver and every
// statement prepared once: the ceiling the write path is measured against.
type rawAppender struct {
	c             *sql.Conn
	begin, commit *sql.Stmt
	body          []*sql.Stmt // rawAppendBody, in order
}

// rawAppendBody is the baseline's transaction body, one statement per
// entry; the insert's arguments are the only ones that vary.
var rawAppendBody = []string{
	"SELECT COUNT(*) FROM sessions WHERE id = 'bench'",
	"INSERT INTO messages (session_id, role, content, created_at) VALUES ('bench', ?, ?, ?)",
	"UPDATE sessions SET message_count = message_count + 1 WHERE id = 'bench'",
	// Indexing the new row in the same transaction, as sessiondb did
	// before the background indexer: the ceiling of a durable append that
	// is indexed at once.
	`INSERT INTO messages_fts (rowid, content, tool_name)
	 SELECT m.id, m.content, m.tool_name FROM fts_pending p JOIN messages m ON m.id = p.id`,
	`INSERT INTO messages_fts_trigram (rowid, content)
	 SELECT m.id, m.content FROM fts_pending p JOIN messages m ON m.id = p.id`,
	"DELETE FROM fts_pending",
}

func newRawAppender(ctx context.Context, c *sql.Conn) (r *rawAppender, err error) {
	r = &rawAppender{c: c}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	//sessiondb:allow txonly -- the raw-driver baseline the write path is measured against
	if r.begin, err = c.PrepareContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	//sessiondb:allow txonly -- the raw-driver baseline the write path is measured against
	if r.commit, err = c.PrepareContext(ctx, "COMMIT"); err != nil {
		return nil, err
	}
	for _, q := range rawAppendBody {
		st, err := c.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		r.body = append(r.body, st)
	}
	return r, nil
}

func (r *rawAppender) append(ctx context.Context, i int) error {
	if _, err := r.begin.ExecContext(ctx); err != nil {
		return err
	}
	m := benchMessage(i)
	for k, st := range r.body {
		var err error
		switch k {
		case 0:
			var n int
			err = st.QueryRowContext(ctx).Scan(&n)
		case 1:
			_, err = st.ExecContext(ctx, string(m.Role), m.Content, time.Now().UnixMilli())
		default:
			_, err = st.ExecContext(ctx)
		}
		if err != nil {
			//sessiondb:allow txonly -- the raw-driver baseline the write path is measured against
			_, _ = r.c.ExecContext(ctx, "ROLLBACK")
			return fmt.Errorf("%s: %w", rawAppendBody[k], err)
		}
	}
	_, err := r.commit.ExecContext(ctx)
	return err
}

func (r *rawAppender) close() {
	for _, st := range append([]*sql.Stmt{r.begin, r.commit}, r.body...) {
		if st != nil {
			st.Close()
		}
	}
}

// rawMessage is what a hand-written loader fills.
type rawMessage struct {
	id, summary, created                           int64
	sid, role, content, state                      string
	toolName, toolCallID, calls, reasoning, finish *string
	key                                            *string
	tokens                                         *int64
}

// rawLoad reads limit messages of the bench session with a bare SELECT
// into a slice: the baseline for Messages.
func rawLoad(ctx context.Context, q *sql.DB, limit int) error {
	rows, err := q.QueryContext(ctx, `SELECT id, session_id, role, content, tool_name, tool_call_id,
		tool_calls_json, reasoning, finish_reason, token_count, state, is_summary, idempotency_key, created_at
		FROM messages WHERE session_id = ? ORDER BY id LIMIT ?`, "bench", limit)
	if err != nil {
		return err
	}
	defer rows.Close()
	var out []rawMessage
	for rows.Next() {
		var m rawMessage
		if err := rows.Scan(&m.id, &m.sid, &m.role, &m.content, &m.toolName, &m.toolCallID, &m.calls,
			&m.reasoning, &m.finish, &m.tokens, &m.state, &m.summary, &m.key, &m.created); err != nil {
			return err
		}
		out = append(out, m)
	}
	if len(out) != limit {
		return fmt.Errorf("raw loader read %d rows, want %d", len(out), limit)
	}
	return rows.Err()
}
