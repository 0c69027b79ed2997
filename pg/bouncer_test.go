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
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/sessiondb/sessiondb/internal/needs"
)

// bouncer is Debian's PgBouncer in front of the test server, in one pool
// mode, listening on a Unix socket in a directory of its own (so its port
// number collides with nothing). It is killed when the test ends.
type bouncer struct {
	dir  string
	port int
	log  string
}

// startBouncer starts PgBouncer in mode (session or transaction) in front
// of SESSIONDB_PG_DSN's server. It ignores the search_path startup
// parameter, as an operator told by the error "unsupported startup
// parameter: search_path" would set it: the setup in which a store that
// trusted its search_path would be made in the server's default schema.
// Without pgbouncer the test skips, saying how to get it; under CI=true
// it fails.
func startBouncer(t *testing.T, mode string) *bouncer {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr != nil {
			needs.Missing(t, "pgbouncer", "apt-get install pgbouncer, or run `bash scripts/test.sh` as root, which installs it")
		}
		bin = "/usr/sbin/pgbouncer"
	}
	server, err := pgconn.ParseConfig(testDSN(t))
	if err != nil {
		t.Fatalf("SESSIONDB_PG_DSN: %v", err)
	}
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b := &bouncer{dir: dir, port: 6432, log: filepath.Join(dir, "pgbouncer.log")}
	target := fmt.Sprintf("host=%s port=%d user=%s", server.Host, server.Port, server.User)
	if server.Password != "" {
		target += " password=" + server.Password
	}
	ini := fmt.Sprintf(`[databases]
* = %s
[pgbouncer]
unix_socket_dir = %s
listen_port = %d
auth_type = any
pool_mode = %s
default_pool_size = 20
max_client_conn = 200
server_reset_query = DISCARD ALL
ignore_startup_parameters = extra_float_digits, search_path
logfile = %s
pidfile = %s
`, target, dir, b.port, mode, b.log, filepath.Join(dir, "pgbouncer.pid"))
	if os.Geteuid() == 0 {
		// PgBouncer refuses to run as root; it switches to this user.
		pgUser, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("pgbouncer cannot run as root and there is no postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(pgUser.Uid)
		gid, _ := strconv.Atoi(pgUser.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		ini += "user = postgres\n"
	}
	iniPath := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(iniPath, []byte(ini), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, iniPath)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pgbouncer: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	socket := filepath.Join(dir, fmt.Sprintf(".s.PGSQL.%d", b.port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(socket); err == nil {
			return b
		}
		select {
		case err := <-exited:
			logText, _ := os.ReadFile(b.log)
			t.Fatalf("pgbouncer exited: %v\n%s", err, logText)
		default:
		}
		if time.Now().After(deadline) {
			logText, _ := os.ReadFile(b.log)
			t.Fatalf("pgbouncer did not listen within 10 s\n%s", logText)
		}
	}
}

// dsn is a connection string through the bouncer to the test server's
// database, with extra key=value parameters appended.
func (b *bouncer) dsn(t *testing.T, extra ...string) string {
	t.Helper()
	server, err := pgconn.ParseConfig(testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(append([]string{fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
		b.dir, b.port, server.User, server.Database)}, extra...), " ")
}

// logTail is the end of the bouncer's log, for a failure's message.
func (b *bouncer) logTail() string {
	text, _ := os.ReadFile(b.log)
	if len(text) > 2000 {
		text = text[len(text)-2000:]
	}
	return string(text)
}

// bouncerCtx bounds a bouncer test's waits: a hang is a failure, with the
// log, not a test binary's timeout.
func bouncerCtx(t *testing.T, b *bouncer) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(func() {
		if ctx.Err() != nil && t.Context().Err() == nil {
			t.Errorf("the test ran out of time; pgbouncer's log:\n%s", b.logTail())
		}
		cancel()
	})
	return ctx
}
