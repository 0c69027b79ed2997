//go:build unix

package pg

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/internal/needs"
	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/storetest"
)

// cluster is a throwaway PostgreSQL cluster of this test's own, run as
// the postgres user on a Unix socket in its directory (no TCP), so a test
// may kill it.
type cluster struct {
	bin, dir, data string
	port           int
}

// pgBin is the newest installed PostgreSQL's bin directory, or the test
// ends through needs.Missing.
func pgBin(t *testing.T) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	needs.Missing(t, "PostgreSQL's server programs (initdb, pg_ctl, pg_basebackup)",
		"apt-get install postgresql, or run `bash scripts/test.sh` as root, which installs it")
	return ""
}

// asPostgres runs a server program as the postgres user, from dir.
func asPostgres(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

// newPrimary initialises and starts a cluster in a fresh directory; opts
// are its server settings (-c name=value). Stopped when the test ends.
func newPrimary(t *testing.T, port int, opts ...string) *cluster {
	t.Helper()
	needs.Root(t, "running throwaway PostgreSQL clusters as the postgres user")
	bin := pgBin(t)
	dir, err := os.MkdirTemp("", "failover-")
	if err != nil {
		t.Fatal(err)
	}
	chownPostgres(t, dir)
	c := &cluster{bin: bin, dir: dir, data: filepath.Join(dir, "primary"), port: port}
	asPostgres(t, dir, filepath.Join(bin, "initdb"), "-D", c.data, "--locale=C.UTF-8", "--encoding=UTF8", "--auth=trust", "-U", "postgres")
	c.start(t, opts...)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return c
}

// standbyOf makes a streaming standby of primary with pg_basebackup -R
// and starts it on port.
func standbyOf(t *testing.T, primary *cluster, port int) *cluster {
	t.Helper()
	c := &cluster{bin: primary.bin, dir: primary.dir, data: filepath.Join(primary.dir, "standby"), port: port}
	asPostgres(t, c.dir, filepath.Join(c.bin, "pg_basebackup"), "-D", c.data, "-R", "-X", "stream", "-c", "fast",
		"-h", primary.dir, "-p", strconv.Itoa(primary.port), "-U", "postgres")
	c.start(t)
	return c
}

func (c *cluster) start(t *testing.T, opts ...string) {
	t.Helper()
	o := fmt.Sprintf("-c listen_addresses='' -k %s -p %d", c.dir, c.port)
	for _, opt := range opts {
		o += " -c " + opt
	}
	asPostgres(t, c.dir, filepath.Join(c.bin, "pg_ctl"), "-D", c.data, "-l", c.data+".log", "-w", "-o", o, "start")
	t.Cleanup(func() {
		cmd := exec.Command("runuser", "-u", "postgres", "--", filepath.Join(c.bin, "pg_ctl"), "-D", c.data, "-m", "immediate", "stop")
		cmd.Dir = c.dir
		_ = cmd.Run() // a killed cluster is already down
	})
}

// kill is kill -9 of the cluster's postmaster: the machine lost.
func (c *cluster) kill(t *testing.T) {
	t.Helper()
	pidFile, err := os.ReadFile(filepath.Join(c.data, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(pidFile), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) dsn() string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", c.dir, c.port)
}

func chownPostgres(t *testing.T, dir string) {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("no postgres user: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
}

// TestFailover_PrimaryKilledStandbyPromoted is the failover runbook of
// docs/OPERATIONS.md, run (issue 31, item 4): writers append keyed turns
// through a multi-host connection string (target_session_attrs=read-write)
// to a primary that commits synchronously to a streaming standby; the
// primary's postmaster is killed (kill -9), the standby promoted
// (pg_ctl promote); the same store goes on writing to the new primary.
// A call in flight ends in success, or in an error the caller resends
// with the same key (ErrCommitUnknown: maybe committed; ErrLocked:
// nothing committed within its patience); every acknowledged turn is on
// the new primary, none twice.
func TestFailover_PrimaryKilledStandbyPromoted(t *testing.T) {
	if os.Getenv("SESSIONDB_PG_DSN") == "" && !needs.InCI() {
		t.Skip("the failover test runs with the PostgreSQL tests: `bash scripts/test.sh`, or set SESSIONDB_PG_DSN")
	}
	const port = 5432 // on a Unix socket in the test's own directory
	primary := newPrimary(t, port, "synchronous_standby_names='*'", "synchronous_commit=on", "max_connections=50")
	standby := standbyOf(t, primary, port+1)
	ctx := t.Context()
	waitSync(t, primary)

	dsn := fmt.Sprintf("host=%s,%s port=%d,%d user=postgres dbname=postgres sslmode=disable target_session_attrs=read-write search_path=fleet",
		primary.dir, standby.dir, primary.port, standby.port)
	const writers, patience = 4, 20 * time.Second
	s, err := Open(ctx, dsn, Options{WritePatience: patience / 2, TranscriptPatience: patience})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for w := range writers {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("w", w), Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var acks, resent atomic.Int64
	acked := make([]map[string]int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		acked[w] = map[string]int64{}
		wg.Go(func() {
			for n := 0; !stop.Load(); n++ {
				key := fmt.Sprint("k", n)
				for deadline := time.Now().Add(2 * patience); ; {
					id, err := s.AppendMessage(ctx, fmt.Sprint("w", w), store.NewMessage{Role: store.RoleUser, Content: "turn " + key, IdempotencyKey: key})
					if err == nil {
						acked[w][key] = id
						acks.Add(1)
						break
					}
					if !store.RetryableKeyed(err) || time.Now().After(deadline) {
						t.Errorf("writer %d %s: %v (want success, or an error a keyed resend cures)", w, key, err)
						return
					}
					resent.Add(1) // the key makes the resend exactly once
				}
			}
		})
	}
	for acks.Load() < 40 {
		time.Sleep(10 * time.Millisecond)
	}
	began := time.Now()
	primary.kill(t)
	asPostgres(t, standby.dir, filepath.Join(standby.bin, "pg_ctl"), "-D", standby.data, "-w", "promote")
	before := acks.Load()
	for acks.Load() < before+40 && time.Since(began) < 2*patience {
		time.Sleep(10 * time.Millisecond)
	}
	resumed := time.Since(began)
	stop.Store(true)
	wg.Wait()
	if acks.Load() < before+40 {
		t.Fatalf("writes did not resume on the promoted standby within %v", 2*patience)
	}

	// Every acknowledged turn is on the new primary, once.
	var total int
	for w := range writers {
		stored := map[string]int64{}
		for _, m := range storetest.WholeSession(t, s.Store, fmt.Sprint("w", w)) {
			key := m.Content[len("turn "):]
			if _, dup := stored[key]; dup {
				t.Errorf("writer %d %s stored twice", w, key)
			}
			stored[key] = m.ID
		}
		for key, id := range acked[w] {
			if stored[key] != id {
				t.Errorf("writer %d %s acknowledged as %d, on the new primary as %d (0 = lost)", w, key, id, stored[key])
			}
		}
		total += len(acked[w])
	}
	t.Logf("primary killed with %d turns acknowledged; writes resumed on the promoted standby within %v; "+
		"%d acknowledged in all, %d resends", before, resumed.Round(time.Millisecond), total, resent.Load())
}

// waitSync waits until the primary has a synchronous standby streaming.
func waitSync(t *testing.T, primary *cluster) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), primary.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no synchronous standby after 15 s")
		}
	}
}
