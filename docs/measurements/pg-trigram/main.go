// tb: timing harness for the pg_trgm index alternatives (scratch tables only).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

var ctx = context.Background()

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

// cpu is a backend's user+system CPU time (clock ticks of 10 ms).
func cpu(pid uint32) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(err)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

func pct(d []float64, p int) float64 {
	d = slices.Clone(d)
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, len(d)*p/100)]
}

func connect(dsn string) (*pgx.Conn, uint32) {
	cfg, err := pgx.ParseConfig(dsn)
	must(err)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	c, err := pgx.ConnectConfig(ctx, cfg)
	must(err)
	_, err = c.Exec(ctx, "SET max_parallel_workers_per_gather = 0")
	must(err)
	return c, c.PgConn().PID()
}

func exec(c *pgx.Conn, sql string) {
	_, err := c.Exec(ctx, sql)
	if err != nil {
		must(fmt.Errorf("%s: %w", sql, err))
	}
}

const cols = "id, session_id, role, tool_name, created_at, state, content, tool_text"

func main() {
	dsn := flag.String("dsn", "host=/work/tmp/pg5440 port=5440 user=postgres dbname=postgres", "")
	mode := flag.String("mode", "", "ins | q | single")
	tables := flag.String("tables", "", "comma-separated tables (first is the no-index baseline for ins)")
	src := flag.String("src", "trgm_exp.src", "row source")
	srcRows := flag.Int("srcrows", 1000000, "rows in src (ids 1..srcrows)")
	n := flag.Int("n", 10000, "rows per insert / single inserts per table")
	rounds := flag.Int("rounds", 6, "")
	warm := flag.Int("warm", 3, "")
	qfile := flag.String("qfile", "", "queries: label<TAB>class<TAB>sql per line")
	syncOff := flag.Bool("syncoff", false, "synchronous_commit off (single)")
	flag.Parse()
	c, pid := connect(*dsn)
	fmt.Printf("# mode=%s start %s loadavg %s\n", *mode, time.Now().Format(time.TimeOnly), loadavg())
	switch *mode {
	case "ins":
		ts := strings.Split(*tables, ",")
		wall := map[string][]float64{}
		cp := map[string][]float64{}
		for r := range *rounds {
			a := (r*7**n + 12345) % (*srcRows - *n)
			for i := range ts {
				t := ts[(i+r)%len(ts)]
				exec(c, "BEGIN")
				c0, t0 := cpu(pid), time.Now()
				exec(c, fmt.Sprintf("INSERT INTO %s (%s) SELECT id + 100000000, session_id, role, tool_name, created_at, state, content, tool_text FROM %s WHERE id > %d AND id <= %d", t, cols, *src, a, a+*n))
				w, k := time.Since(t0), cpu(pid)-c0
				exec(c, "ROLLBACK")
				exec(c, "VACUUM "+t)
				wall[t] = append(wall[t], float64(w.Microseconds())/float64(*n))
				cp[t] = append(cp[t], float64(k.Microseconds())/float64(*n))
				fmt.Printf("round %d %-14s wall %7.1f us/row  cpu %7.1f us/row  load %s\n", r, t, wall[t][r], cp[t][r], loadavg())
			}
		}
		base := ts[0]
		fmt.Printf("\n%-14s %10s %10s %12s %12s   (us/row; over = paired per-round difference to %s, median [min..max])\n", "table", "wall p50", "cpu p50", "wall over", "cpu over", base)
		for _, t := range ts {
			var dw, dc []float64
			for r := range wall[t] {
				dw = append(dw, wall[t][r]-wall[base][r])
				dc = append(dc, cp[t][r]-cp[base][r])
			}
			fmt.Printf("%-14s %10.1f %10.1f %6.1f [%.1f..%.1f] %6.1f [%.1f..%.1f]\n", t, pct(wall[t], 50), pct(cp[t], 50),
				pct(dw, 50), slices.Min(dw), slices.Max(dw), pct(dc, 50), slices.Min(dc), slices.Max(dc))
		}
	case "q":
		f, err := os.Open(*qfile)
		must(err)
		type q struct{ label, class, sql string }
		var qs []q
		var classes, labels []string
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			p := strings.SplitN(l, "\t", 3)
			qs = append(qs, q{p[0], p[1], p[2]})
			if !slices.Contains(classes, p[1]) {
				classes = append(classes, p[1])
			}
			if !slices.Contains(labels, p[0]) {
				labels = append(labels, p[0])
			}
		}
		times := map[string][]float64{}
		rows := map[string]int{}
		for r := range *warm + *rounds {
			for _, cl := range classes {
				var these []q
				for _, x := range qs {
					if x.class == cl {
						these = append(these, x)
					}
				}
				for i := range these {
					x := these[(i+r)%len(these)]
					t0 := time.Now()
					rs, err := c.Query(ctx, x.sql)
					must(err)
					k := 0
					for rs.Next() {
						k++
					}
					must(rs.Err())
					d := time.Since(t0)
					key := x.label + "|" + x.class
					rows[key] = k
					if r >= *warm {
						times[key] = append(times[key], float64(d.Microseconds())/1000)
					}
				}
			}
		}
		fmt.Printf("%-12s %-10s %9s %9s %9s %6s\n", "label", "class", "p50 ms", "p90 ms", "max ms", "rows")
		for _, cl := range classes {
			for _, l := range labels {
				key := l + "|" + cl
				if _, ok := times[key]; !ok {
					continue
				}
				fmt.Printf("%-12s %-10s %9.2f %9.2f %9.2f %6d\n", l, cl, pct(times[key], 50), pct(times[key], 90), slices.Max(times[key]), rows[key])
			}
		}
	case "single":
		ts := strings.Split(*tables, ",")
		if *syncOff {
			exec(c, "SET synchronous_commit = off")
		}
		lat := map[string][]float64{}
		for i := range *n {
			id := (i*97)%*srcRows + 1
			for j := range ts {
				t := ts[(i+j)%len(ts)]
				t0 := time.Now()
				exec(c, fmt.Sprintf("INSERT INTO %s (%s) SELECT id + 100000000 + %d, session_id, role, tool_name, created_at, state, content, tool_text FROM %s WHERE id = %d", t, cols, i*0, *src, id))
				lat[t] = append(lat[t], float64(time.Since(t0).Microseconds())/1000)
			}
		}
		fmt.Printf("%-10s %8s %8s %8s %8s %8s %8s\n", "table", "mean", "p50 ms", "p90", "p99", "p99.9", "max")
		for _, t := range ts {
			s := 0.0
			for _, v := range lat[t] {
				s += v
			}
			d := slices.Clone(lat[t])
			slices.Sort(d)
			fmt.Printf("%-10s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f\n", t, s/float64(len(d)), pct(d, 50), pct(d, 90), pct(d, 99), d[len(d)*999/1000], d[len(d)-1])
		}
		for _, t := range ts {
			exec(c, fmt.Sprintf("DELETE FROM %s WHERE id > 100000000", t))
			exec(c, "VACUUM "+t)
		}
	}
	fmt.Printf("# end %s loadavg %s\n", time.Now().Format(time.TimeOnly), loadavg())
}
