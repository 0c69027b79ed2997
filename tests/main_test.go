// Package tests holds sessiondb's black-box tests: real files on disk, real
// second processes (this test binary re-run as a helper, Python's sqlite3,
// the CLI), real permissions. Python 3 must be on PATH (.ci/run installs it).
package tests

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// helperEnv selects a helper mode when this test binary is re-run as a
// second process.
const helperEnv = "SESSIONDB_TEST_HELPER"

// cliPath is the sessiondb binary built for the CLI tests.
var cliPath string

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Args[len(os.Args)-1]))
	}
	dir, err := os.MkdirTemp("", "sessiondb-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cliPath = filepath.Join(dir, "sessiondb")
	// -buildvcs=auto stamps the revision (for `sessiondb version`) even
	// where GOFLAGS turns stamping off. The CLI is its own module (it links
	// both engines), so it is built from its directory.
	build := exec.Command("go", "build", "-C", "../cmd/sessiondb", "-buildvcs=auto", "-o", cliPath, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the CLI:", err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755) // the read-only test runs the CLI as another user
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runHelper is the body of a helper process.
func runHelper(mode, path string) int {
	ctx := context.Background()
	switch mode {
	case "open":
		// Start at the agreed moment, so the racers really race.
		if at, err := time.Parse(time.RFC3339Nano, os.Getenv("SESSIONDB_TEST_START")); err == nil {
			time.Sleep(time.Until(at))
		}
		s, err := db.Open(ctx, path, db.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "open:", err)
			return 1
		}
		if _, _, err := s.EnsureSession(ctx, db.NewSession{ID: "racer", Source: "test"}); err != nil {
			fmt.Fprintln(os.Stderr, "ensure:", err)
			return 1
		}
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close:", err)
			return 1
		}
		return 0
	case "torture":
		return tortureWriter(ctx, path, os.Getenv("SESSIONDB_TEST_PREFIX"), os.Getenv("SESSIONDB_TEST_RETRY"))
	case "lease":
		return raceForLeases(ctx, path)
	case "append":
		return appendUntilKilled(ctx, path, os.Getenv("SESSIONDB_TEST_PREFIX"), os.Getenv("SESSIONDB_TEST_RETRY"))
	case "delete-sessions":
		return deleteSessions(ctx, path, strings.Split(os.Getenv("SESSIONDB_TEST_SESSIONS"), ","))
	case "append-words":
		return appendWords(ctx, path)
	case "hold":
		return holdOpen(ctx, path)
	case "poll":
		return pollSidecars(path)
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// helper starts this test binary as a helper process.
func helper(t *testing.T, mode, path string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", path)
	cmd.Env = append(os.Environ(), append(env, helperEnv+"="+mode)...)
	return cmd
}

// startHelper starts a helper process whose stderr is the test's (one
// that ends by itself says why: mustHaveBeenKilled) and returns it with
// its stdout, which the caller reads.
func startHelper(t *testing.T, mode, path string, env ...string) (*exec.Cmd, io.ReadCloser) {
	t.Helper()
	cmd := helper(t, mode, path, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// openStore opens a store at path for a test and closes it at the end.
func openStore(t *testing.T, path string, opts db.Options) *db.Store {
	t.Helper()
	s, err := db.Open(t.Context(), path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// holdOpen is the body of a process that keeps a store open: it writes a
// session "held", prints "ready", and closes the store when its standard
// input ends.
func holdOpen(ctx context.Context, path string) int {
	s, err := db.Open(ctx, path, db.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	if _, _, err := s.EnsureSession(ctx, db.NewSession{ID: "held", Source: "test"}); err != nil {
		fmt.Fprintln(os.Stderr, "ensure:", err)
		return 1
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		return 1
	}
	return 0
}

// pollSidecars is the body of a process (run as another user) that
// watches every -wal and -shm file in dir until its standard input ends:
// it notes the files it saw with any group or other permission, tries to
// open each, keeps one descriptor per file it got, and prints "opened N
// read B wide W": the files it opened, the bytes it could read through
// them at the end, and the files it saw wider than 0600.
func pollSidecars(dir string) int {
	stop := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stop) }()
	var held []*os.File
	var heldInfo, wide []os.FileInfo
	seen := func(list []os.FileInfo, fi os.FileInfo) bool {
		for _, x := range list {
			if os.SameFile(x, fi) {
				return true
			}
		}
		return false
	}
	for {
		select {
		case <-stop:
			var read int64
			for _, f := range held {
				n, _ := io.Copy(io.Discard, io.NewSectionReader(f, 0, 1<<40))
				read += n
			}
			fmt.Printf("opened %d read %d wide %d\n", len(held), read, len(wide))
			return 0
		default:
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			n := e.Name()
			if !strings.HasSuffix(n, "-wal") && !strings.HasSuffix(n, "-shm") {
				continue
			}
			p := filepath.Join(dir, n)
			if fi, err := os.Lstat(p); err == nil && fi.Mode().Perm()&0o077 != 0 && !seen(wide, fi) {
				wide = append(wide, fi)
			}
			f, err := os.Open(p)
			if err != nil {
				continue
			}
			if fi, err := f.Stat(); err == nil && !seen(heldInfo, fi) {
				held, heldInfo = append(held, f), append(heldInfo, fi)
			} else {
				f.Close()
			}
		}
	}
}

// appendUntilKilled is the body of a writer process: it appends messages
// with idempotency keys until it is killed, printing "send K" before each
// append and "ack K" once it returned. A key left in flight by a killed
// predecessor is re-sent first (retry), as a gateway would after a crash.
// With SESSIONDB_TEST_MANUAL_INDEXING set it runs no indexer, and with
// SESSIONDB_TEST_APPEND_PAUSE (a duration) it waits that long after each
// acknowledged append.
func appendUntilKilled(ctx context.Context, path, prefix, retry string) int {
	pause, err := time.ParseDuration(cmp.Or(os.Getenv("SESSIONDB_TEST_APPEND_PAUSE"), "0s"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "pause:", err)
		return 1
	}
	s, err := db.Open(ctx, path, db.Options{ManualIndexing: os.Getenv("SESSIONDB_TEST_MANUAL_INDEXING") != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	if _, _, err := s.EnsureSession(ctx, db.NewSession{ID: "k", Source: "kill"}); err != nil {
		fmt.Fprintln(os.Stderr, "ensure:", err)
		return 1
	}
	send := func(key string) bool {
		fmt.Printf("send %s\n", key)
		if _, err := s.AppendMessage(ctx, "k", db.NewMessage{Role: db.RoleUser, Content: "turn " + key, IdempotencyKey: key}); err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			return false
		}
		fmt.Printf("ack %s\n", key)
		time.Sleep(pause)
		return true
	}
	if retry != "" && !send(retry) {
		return 1
	}
	for n := 0; ; n++ {
		if !send(fmt.Sprintf("%s-%d", prefix, n)) {
			return 1
		}
	}
}

// deleteSessions is the body of a deleting process: it deletes each
// session in ids that still exists, printing "deleted ID" once a delete
// returned, then stays open (its indexer forgets the deleted rows' text
// in the background) until it is killed. With
// SESSIONDB_TEST_MANUAL_INDEXING set it runs no indexer, so the deleted
// rows' text stays queued until the next Open.
func deleteSessions(ctx context.Context, path string, ids []string) int {
	s, err := db.Open(ctx, path, db.Options{ManualIndexing: os.Getenv("SESSIONDB_TEST_MANUAL_INDEXING") != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	for _, id := range ids {
		if _, err := s.Session(ctx, id); errors.Is(err, db.ErrNotFound) {
			fmt.Printf("deleted %s\n", id) // by the process killed before it said so
			continue
		}
		if _, err := s.DeleteSession(ctx, id, db.DeleteOptions{ExpectedIDs: []string{id}}); err != nil {
			fmt.Fprintln(os.Stderr, "delete:", err)
			return 1
		}
		fmt.Printf("deleted %s\n", id)
	}
	select {}
}
