package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sessiondb/sessiondb/bench"
)

type benchJSON struct {
	Name           string  `json:"name"`
	Ops            int     `json:"ops"`
	PerSecond      float64 `json:"per_second"`
	P50Ms          float64 `json:"p50_ms"`
	P99Ms          float64 `json:"p99_ms"`
	Baseline       string  `json:"baseline,omitempty"`
	BaselinePerSec float64 `json:"baseline_per_second,omitempty"`
	Ratio          float64 `json:"ratio,omitempty"`
}

// runBench measures the store on scratch databases (never the user's) and
// prints a table of rates, latencies and ratios to the raw driver.
func runBench(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var cfg bench.Config
	fs.IntVar(&cfg.Appends, "appends", 2000, "appends per append workload")
	appenders := fs.String("appenders", "1,4,16,64", "concurrent appender counts, comma-separated")
	fs.IntVar(&cfg.ReadRows, "rows", 20000, "rows in the read workload")
	dir := fs.String("dir", "", "directory for the scratch databases (default: a temporary one, removed after)")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if isServerURL(e.dbPath) { // bench never touches --db, so asking it to bench a server is a mistake
		return fileOperationError{"bench", redactURL(e.dbPath)}
	}
	for _, f := range strings.Split(*appenders, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return usagef("bench: --appenders: %q is not a count from 1 to 1024", f)
		}
		cfg.Appenders = append(cfg.Appenders, n)
	}
	if cfg.Appends < 1 || cfg.ReadRows < 1 {
		return usagef("bench: --appends and --rows must be positive")
	}
	scratch := *dir
	if scratch == "" {
		tmp, err := os.MkdirTemp("", "sessiondb-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		scratch = tmp
	}
	bar := e.bar(-1, "bench")
	progress := func(name string) { bar.Describe("measuring: " + name); bar.Add(1) }
	results, err := bench.Run(ctx, scratch, cfg, progress)
	bar.Finish()
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, mapAll(results, func(r bench.Result) benchJSON {
			return benchJSON{r.Name, r.Ops, r.PerSecond, ms(r.P50), ms(r.P99), r.Baseline, r.BaselineOp, r.Ratio()}
		}))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tops\tper second\tp50 ms\tp99 ms\tvs raw driver\t")
	for _, r := range results {
		ratio := ""
		if r.Ratio() > 0 {
			ratio = fmt.Sprintf("%.2f×", r.Ratio())
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.2f\t%s\t\n", r.Name, r.Ops, r.PerSecond, ms(r.P50), ms(r.P99), ratio)
	}
	return tw.Flush()
}
