package pg

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store"
)

// Several processes appending to one server, as a fleet of gateways
// does: each process its own store (pool, batches) and 16 appenders on
// sessions of their own.
const procBenchEnv = "SESSIONDB_PG_BENCH_PROC" // schema,process,appenders,messages

// TestAppendBenchProcess is one process of BenchmarkAppendMessage_Processes
// (and nothing otherwise). It creates its sessions, prints "ready", waits
// for a line on stdin, appends its share and prints "result <messages>
// <seconds> <p50 µs> <p99 µs> <reruns> <batch reruns> <batches> <appends
// in them>".
func TestAppendBenchProcess(t *testing.T) {
	spec := os.Getenv(procBenchEnv)
	if spec == "" {
		return
	}
	f := strings.Split(spec, ",")
	proc, _ := strconv.Atoi(f[1])
	appenders, _ := strconv.Atoi(f[2])
	msgs, _ := strconv.Atoi(f[3])
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "bench process:", err)
		os.Exit(2)
	}
	var reruns rerunCounter
	cfg, err := ParseConfig(testDSN(t), f[0])
	if err != nil {
		fail(err)
	}
	cfg.MaxConns = defaultMaxConns
	cfg.ConnConfig.Tracer = &reruns
	s, pool, err := openCounted(cfg)
	if err != nil {
		fail(err)
	}
	defer pool.Close()
	ctx := context.Background()
	sessions := make([]string, appenders)
	for w := range sessions {
		sessions[w] = fmt.Sprintf("p%d-%d", proc, w)
		if _, err := s.CreateSession(ctx, store.NewSession{ID: sessions[w], Source: "bench"}); err != nil {
			fail(err)
		}
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fail(err)
	}
	reruns.n.Store(0)
	before := batchCounts(s)
	lat := make([][]time.Duration, appenders)
	errs := make(chan error, appenders)
	start := time.Now()
	done := make(chan struct{})
	for w := range appenders {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := w; i < msgs; i += appenders {
				t0 := time.Now()
				if _, err := s.AppendMessage(ctx, sessions[w], benchMessage(i)); err != nil {
					errs <- err
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	for range appenders {
		<-done
	}
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		fail(err)
	default:
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		all = []time.Duration{0}
	}
	fmt.Printf("result %d %f %d %d %d %d %d %d\n", len(all), elapsed.Seconds(), all[len(all)/2].Microseconds(),
		all[len(all)*99/100].Microseconds(), reruns.n.Load(), s.eng.appends.reruns.Load()-before[2],
		s.eng.appends.batches.Load()-before[0], s.eng.appends.appends.Load()-before[1])
	s.Close()
	os.Exit(0)
}

// BenchmarkAppendMessage_Processes runs procs processes of 16 appenders
// each, every appender on its own session, sharing b.N appends. It
// reports the aggregate rate (all messages over the slowest process's
// time), the median of the processes' p50 and the largest p99, and
// reruns a message: statements the server refused (40001, 40P01) and
// batches run again.
func BenchmarkAppendMessage_Processes(b *testing.B) {
	for _, procs := range []int{1, 4} {
		b.Run(fmt.Sprintf("procs=%d/appenders=16", procs), func(b *testing.B) {
			pool := benchPool(b, 0, nil)
			benchStore(b, pool) // the schema, migrated
			schema, err := SchemaOf(pool.Config())
			if err != nil {
				b.Fatal(err)
			}
			outs := make([]*bufio.Reader, procs)
			starts := make([]io.WriteCloser, procs)
			cmds := make([]*exec.Cmd, procs)
			for i := range outs {
				cmd := exec.Command(os.Args[0], "-test.run=^TestAppendBenchProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,16,%d", procBenchEnv, schema, i, max(b.N/procs, 1)))
				cmd.Stderr = os.Stderr
				stdin, err := cmd.StdinPipe()
				if err != nil {
					b.Fatal(err)
				}
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
				outs[i], starts[i], cmds[i] = bufio.NewReader(stdout), stdin, cmd
				waitLine(b, outs[i], "ready")
			}
			cpu := serverCPU(b, pool)
			cpuBefore := cpu()
			for _, w := range starts { // every process is ready: go
				fmt.Fprintln(w)
			}
			var msgs int
			var slowest float64
			fastest := math.Inf(1)
			var p50s []float64
			var p99, reruns, batchReruns, batches, batched float64
			for _, out := range outs {
				f := strings.Fields(waitLine(b, out, "result "))
				n, _ := strconv.Atoi(f[1])
				secs, _ := strconv.ParseFloat(f[2], 64)
				p50, _ := strconv.ParseFloat(f[3], 64)
				q99, _ := strconv.ParseFloat(f[4], 64)
				rr, _ := strconv.ParseFloat(f[5], 64)
				br, _ := strconv.ParseFloat(f[6], 64)
				nb, _ := strconv.ParseFloat(f[7], 64)
				na, _ := strconv.ParseFloat(f[8], 64)
				batches += nb
				batched += na
				msgs += n
				slowest = max(slowest, secs)
				fastest = min(fastest, secs)
				p50s = append(p50s, p50/1000)
				p99 = max(p99, q99/1000)
				reruns += rr
				batchReruns += br
			}
			reportServerCPU(b, cpuBefore, cpu())
			// The appending processes' own CPU (their setup included: a
			// store's open, 16 sessions made), a message.
			var client time.Duration
			for _, cmd := range cmds {
				if err := cmd.Wait(); err == nil {
					client += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				}
			}
			b.ReportMetric(float64(client.Microseconds())/float64(msgs), "client-µs/msg")
			slices.Sort(p50s)
			b.ReportMetric(float64(msgs)/slowest, "msgs/s")
			// The aggregate is over the slowest process's time: a process
			// the server served less keeps the others' total waiting.
			b.ReportMetric(slowest/fastest, "slowest/fastest")
			b.ReportMetric(p50s[len(p50s)/2], "p50-ms")
			b.ReportMetric(p99, "p99-ms")
			b.ReportMetric(reruns/float64(msgs), "reruns/msg")
			b.ReportMetric(batchReruns/float64(msgs), "batch-reruns/msg")
			if batches > 0 {
				b.ReportMetric(batched/batches, "msgs/txn")
			}
		})
	}
}

// waitLine reads r until a line starting with prefix, which it returns.
func waitLine(b *testing.B, r *bufio.Reader, prefix string) string {
	b.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatalf("bench process ended before %q: %v", prefix, err)
		}
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line)
		}
	}
}

// openCounted opens a store on a pool made from cfg.
func openCounted(cfg *pgxpool.Config) (*Store, *pgxpool.Pool, error) {
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, nil, err
	}
	s, err := OpenPool(context.Background(), pool, Options{})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return s, pool, nil
}
