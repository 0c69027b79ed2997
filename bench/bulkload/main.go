// Command bulkload measures bulk populate on SQLite (issue 37): it fills a
// fresh store with internal/benchcorpus's corpus through AppendMessages in
// batches, inside Store.BulkLoad with -bulk, then has the index catch up
// (IndexNow), and prints msgs/s, the CPU a message, the index lag when
// the fill returned and the peak RSS. The store is left at DIR/bulk.db,
// a source for `sessiondb export` and `sessiondb copy`. For an A/B, build
// it at two commits and alternate the binaries (docs/PERFORMANCE.md,
// "Bulk load"):
//
//	go run ./bench/bulkload -n 100000 -dir /some/dir [-batch 100] [-bulk] [-cpuprofile f]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/internal/benchcorpus"
)

// bulkLoader is Store.BulkLoad, asserted so that this file also builds at
// a commit before it.
type bulkLoader interface {
	BulkLoad(ctx context.Context, load func(ctx context.Context) error) error
}

func main() {
	n := flag.Int("n", 100000, "messages to write")
	batch := flag.Int("batch", 100, "messages per AppendMessages call")
	loaders := flag.Int("loaders", 1, "goroutines sharing the sessions (benchcorpus.FillParallel)")
	dir := flag.String("dir", os.TempDir(), "directory for the store (DIR/bulk.db, replaced)")
	bulk := flag.Bool("bulk", false, "fill inside Store.BulkLoad")
	manual := flag.Bool("manual", false, "Options.ManualIndexing: index only at the end")
	importFile := flag.String("import", "", "instead of AppendMessages, Import this export file (sessiondb export)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the fill and catch-up here")
	flag.Parse()
	ctx := context.Background()
	path := filepath.Join(*dir, "bulk.db")
	for _, suf := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suf)
	}
	s, err := db.Open(ctx, path, db.Options{ManualIndexing: *manual})
	if err != nil {
		log.Fatal(err)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	fill := func(ctx context.Context) error { return benchcorpus.FillParallel(ctx, s.Store, *n, *batch, *loaders) }
	var lag time.Duration
	start, cpu0 := time.Now(), benchcorpus.ProcessCPU()
	if *importFile != "" {
		f, ferr := os.Open(*importFile)
		if ferr != nil {
			log.Fatal(ferr)
		}
		fill = func(ctx context.Context) error {
			defer f.Close()
			res, err := s.Import(ctx, f, db.ImportOptions{})
			*n = int(res.Messages)
			return err
		}
	}
	if *bulk {
		b, ok := any(s).(bulkLoader)
		if !ok {
			log.Fatal("this build has no Store.BulkLoad")
		}
		err = b.BulkLoad(ctx, func(ctx context.Context) error {
			err := fill(ctx)
			lag = s.Stats().IndexLag
			return err
		})
	} else {
		err = fill(ctx)
		lag = s.Stats().IndexLag
	}
	if err != nil {
		log.Fatal(err)
	}
	filled, cpuFill := time.Since(start), benchcorpus.ProcessCPU()-cpu0
	if err := s.IndexNow(ctx); err != nil {
		log.Fatal(err)
	}
	caught, cpuAll := time.Since(start), benchcorpus.ProcessCPU()-cpu0
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("n=%d batch=%d loaders=%d bulk=%v returned %.1fs %.0f msgs/s (CPU %.0f µs/msg), index lag then %v; caught up %.1fs %.0f msgs/s (CPU %.1fs, %.0f µs/msg); peak RSS %s\n",
		*n, *batch, *loaders, *bulk, filled.Seconds(), float64(*n)/filled.Seconds(), us(cpuFill, *n), lag.Round(time.Millisecond),
		caught.Seconds(), float64(*n)/caught.Seconds(), cpuAll.Seconds(), us(cpuAll, *n), peakRSS())
}

func us(d time.Duration, n int) float64 { return float64(d.Microseconds()) / float64(n) }

// peakRSS is the process's VmHWM from /proc/self/status.
func peakRSS() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.Join(strings.Fields(l)[1:], " ")
		}
	}
	return "?"
}
