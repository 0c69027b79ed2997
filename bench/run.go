// Package bench measures sessiondb against its baselines: the workloads
// `sessiondb bench` prints (Run), and, under go test -bench, the same
// workloads with the raw driver doing the same work (raw.go) and the
// Python store's pattern (python_peer.py) beside them:
//
//	go test -run '^$' -bench . -benchtime 2000x ./bench/
//
// It drives sessiondb only through db's public API; the raw-driver
// baseline opens its own connection, which is why it lives here and not
// in the library. Figures and ratios: docs/PERFORMANCE.md.
package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// Config sizes Run. The zero value is a quick run.
type Config struct {
	Appends   int   // appends per append workload (default 2000)
	Appenders []int // concurrent appender counts (default 1, 4, 16, 64)
	ReadRows  int   // rows in the read workload (default 20000)
}

// Result is one workload's figures, with its baseline where it
// has one (the raw driver doing the same work with the same pragmas).
type Result struct {
	Name       string
	Ops        int
	PerSecond  float64
	P50, P99   time.Duration
	Baseline   string  // the baseline workload's name, if any
	BaselineOp float64 // the baseline's ops per second
}

// Ratio is PerSecond over the baseline's (0 without a baseline).
func (r Result) Ratio() float64 {
	if r.BaselineOp == 0 {
		return 0
	}
	return r.PerSecond / r.BaselineOp
}

// Run measures the store in dir (fresh databases are created
// there): serial appends against the raw driver, concurrent appenders
// (group commit), 10-message batches, reading a long session against a
// raw loader, searching and exporting it, and Open. progress, if set, is told each workload's name.
// `sessiondb bench` prints its result; `go test -bench` here measures the
// same workloads for benchstat.
func Run(ctx context.Context, dir string, cfg Config, progress func(string)) ([]Result, error) {
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
	fresh := func() (*db.Store, error) {
		n++
		s, err := db.Open(ctx, filepath.Join(dir, fmt.Sprintf("bench-%d.db", n)), db.Options{})
		if err != nil {
			return nil, err
		}
		if _, err := s.CreateSession(ctx, db.NewSession{ID: "bench", Source: "bench"}); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	var out []Result

	progress("raw driver, serial")
	raw, err := func() (Result, error) {
		s, err := fresh()
		if err != nil {
			return Result{}, err
		}
		path := s.Path()
		if err := s.Close(); err != nil {
			return Result{}, err
		}
		ra, err := newRawAppender(ctx, path)
		if err != nil {
			return Result{}, err
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
	batch := make([]db.NewMessage, 10)
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
		page := make([]db.NewMessage, min(1000, cfg.ReadRows-filled))
		for i := range page {
			page[i] = benchMessage(filled + i)
		}
		if _, err := s.AppendMessages(ctx, "bench", page); err != nil {
			return nil, err
		}
	}
	// The session now holds the batches above too: read exactly ReadRows.
	loader, err := openRawLoader(s.Path())
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	rawRead, err := timeOps(fmt.Sprintf("raw loader, %d rows", cfg.ReadRows), 20, 1, func(int) error {
		return rawLoad(ctx, loader, cfg.ReadRows)
	})
	if err != nil {
		return nil, err
	}
	read, err := timeOps(fmt.Sprintf("Messages, %d rows", cfg.ReadRows), 20, 1, func(int) error {
		_, err := s.Messages(ctx, "bench", db.MessageQuery{Limit: cfg.ReadRows})
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
		_, err := s.Search(ctx, queries[i%len(queries)], db.SearchOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	out = append(out, search)

	progress(fmt.Sprintf("export %d messages", cfg.ReadRows))
	export, err := timeOps(fmt.Sprintf("Export, %d messages (msgs)", cfg.ReadRows), 1, 1, func(int) error {
		_, err := s.Export(ctx, io.Discard, db.ExportOptions{})
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
		s, err := db.Open(ctx, path, db.Options{})
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
func timeOps(name string, ops, workers int, op func(i int) error) (Result, error) {
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
			return Result{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := Result{Name: name, Ops: ops, PerSecond: float64(ops) / elapsed.Seconds()}
	if len(all) > 0 {
		r.P50, r.P99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r, nil
}

// benchMessage is the i-th message every workload appends.
func benchMessage(i int) db.NewMessage {
	return db.NewMessage{Role: db.RoleUser, Content: fmt.Sprintf("message %d: the quick brown fox jumps over the lazy dog", i)}
}
