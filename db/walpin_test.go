package db

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pinReaderEnv makes TestHelperPinReader, run as a second process, hold a
// read snapshot on the database it names.
const pinReaderEnv = "SESSIONDB_TEST_PIN_READER"

// TestHelperPinReader is the body of the pinning process: it opens the
// file as a reader, begins a read transaction, reads, says "pinned" and
// keeps the snapshot until its stdin closes. Run on its own it does nothing.
func TestHelperPinReader(t *testing.T) {
	path := os.Getenv(pinReaderEnv)
	if path == "" {
		return
	}
	pool, err := openDB(path, kindReader, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := pool.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	//sessiondb:allow txonly -- the pinning reader's snapshot, held on purpose
	if _, err := c.ExecContext(context.Background(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := c.QueryRowContext(context.Background(), "SELECT count(*) FROM messages").Scan(&n); err != nil {
		t.Fatal(err)
	}
	fmt.Println("pinned")
	io.Copy(io.Discard, os.Stdin)
}

// startPinningProcess runs TestHelperPinReader on path in a second
// process and returns its pid once its snapshot is held.
func startPinningProcess(t *testing.T, path string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPinReader$")
	cmd.Env = append(os.Environ(), pinReaderEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); strings.TrimSpace(line) != "pinned" {
		t.Fatalf("the pinning process did not take its snapshot: %q", line)
	}
	return cmd.Process.Pid
}

// A reader that never lets go: another process holds a snapshot while
// writes go on. The log cannot start over, so Stats shows it growing and
// the restarts the reader outlasted, and the warning names the process.
func TestWALPin_AnotherProcessIsNamed(t *testing.T) {
	logger, logs := debugLogs()
	s := openTestStore(t, Options{CheckpointEvery: testEvery, walBound: testBound, Logger: logger})
	newTestSession(t, s, "s")
	pid := startPinningProcess(t, s.Path())

	stop := time.Now().Add(1500 * time.Millisecond)
	appendWords(t, s, -1, func(int) bool { return time.Now().After(stop) })
	early := s.Stats()
	appendWords(t, s, 100, nil)
	st := s.Stats()
	if st.WALRestartsOutlasted == 0 || st.WALRestarts != 0 {
		t.Errorf("with another process's snapshot held: WALRestartsOutlasted = %d, WALRestarts = %d; want > 0, 0",
			st.WALRestartsOutlasted, st.WALRestarts)
	}
	if st.WALBytes <= testBound || st.WALBytes <= early.WALBytes {
		t.Errorf("WALBytes = %d then %d; want it past the bound (%d) and growing", early.WALBytes, st.WALBytes, testBound)
	}
	warning := waitForLog(t, logs, "outlasted WAL restarts")
	if want := "pid " + strconv.Itoa(pid) + " "; !strings.Contains(warning, want) {
		t.Errorf("the warning does not name the pinning process (%s):\n%s", want, warning)
	}
	if n := strings.Count(logs.String(), "outlasted WAL restarts"); n != 1 {
		t.Errorf("%d warnings in %d outlasted restarts; want one (rate-limited)", n, st.WALRestartsOutlasted)
	}
}

// The pin is this process's own read: the warning says so.
func TestWALPin_OwnReadIsNamed(t *testing.T) {
	logger, logs := debugLogs()
	s := openTestStore(t, Options{CheckpointEvery: testEvery, walBound: testBound, Logger: logger})
	newTestSession(t, s, "s")
	held, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s.snapshot(t.Context(), "hold", "", func(q genDBTX) error {
			var n int64
			if err := q.QueryRowContext(t.Context(), "SELECT count(*) FROM messages").Scan(&n); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	})
	defer wg.Wait()
	defer close(release)
	<-held
	stop := time.Now().Add(1500 * time.Millisecond)
	appendWords(t, s, -1, func(int) bool { return time.Now().After(stop) })
	if st := s.Stats(); st.WALRestartsOutlasted == 0 {
		t.Errorf("WALRestartsOutlasted = 0 with this process's own snapshot held")
	}
	warning := waitForLog(t, logs, "outlasted WAL restarts")
	if want := fmt.Sprintf("this process (pid %d): 1 of its reads in flight", os.Getpid()); !strings.Contains(warning, want) {
		t.Errorf("the warning does not name this process's read (%q):\n%s", want, warning)
	}
}

// waitForLog returns the first log line containing what, waiting a little
// for it (the warning is written by its own goroutine).
func waitForLog(t *testing.T, logs *syncBuffer, what string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for line := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(line, what) {
				return line
			}
		}
	}
	t.Fatalf("no log line says %q:\n%s", what, logs.String())
	return ""
}

// slowWriter is an export's consumer that takes its time: a pipe, a
// network. It counts the writes.
type slowWriter struct {
	pause  time.Duration
	writes atomic.Int64
}

func (w *slowWriter) Write(p []byte) (int, error) {
	w.writes.Add(1)
	time.Sleep(w.pause)
	return len(p), nil
}

// An export to a slow consumer while writes go on does not hold one read
// snapshot throughout: RESTART checkpoints, which must wait for every
// reader of the log, complete while it runs. (With one snapshot for the
// whole export, every one is outlasted until the last rows are read.) The export still holds
// each message committed before it began exactly once.
func TestExport_DoesNotPinTheLog(t *testing.T) {
	s := openTestStore(t, Options{CheckpointEvery: -1})
	newTestSession(t, s, "s")
	const before = 3000
	batch := make([]NewMessage, 100)
	for i := 0; i < before; i += len(batch) {
		for k := range batch {
			batch[k] = NewMessage{Role: RoleUser, Content: strings.Repeat("word ", 200) + strconv.Itoa(i+k)}
		}
		if _, err := s.AppendMessages(t.Context(), "s", batch); err != nil {
			t.Fatal(err)
		}
	}
	other, err := openDB(s.Path(), kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	checkpointer, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer checkpointer.Close()
	if err := setBusyTimeout(t.Context(), checkpointer, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}

	w := &slowWriter{pause: 20 * time.Millisecond}
	done := make(chan struct{})
	var restarts []int64 // the export's writes so far when each completed
	var outlasted int
	var wg sync.WaitGroup
	wg.Go(func() {
		for w.writes.Load() == 0 { // the export has begun
			time.Sleep(time.Millisecond)
		}
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := s.AppendMessage(t.Context(), "s", NewMessage{Role: RoleUser, Content: "during " + strconv.Itoa(i)}); err != nil {
				t.Error(err)
				return
			}
			busy, _, err := walCheckpoint(t.Context(), checkpointer, "RESTART")
			switch {
			case err != nil && !isLockError(err):
				t.Error(err)
				return
			case err == nil && !busy:
				restarts = append(restarts, w.writes.Load())
			default:
				outlasted++
			}
		}
	})
	var out strings.Builder
	res, err := s.Export(t.Context(), io.MultiWriter(&out, w), ExportOptions{})
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	// The final flush runs after the last read: a restart then proves
	// nothing. One that completed with two or more of the export's writes
	// still to come completed before its last page was read: the export
	// did not hold one snapshot throughout. Counted by the export's
	// progress, not by the clock, which a loaded machine skews.
	total, early := w.writes.Load(), 0
	for _, at := range restarts {
		if at+1 < total {
			early++
		}
	}
	t.Logf("export of %d messages in %d writes: %d RESTART checkpoints completed during it (%d before its last read), %d outlasted",
		res.Messages, total, len(restarts), early, outlasted)
	if early == 0 {
		t.Errorf("no RESTART checkpoint completed before the export's last read (%d outlasted): it pins the log", outlasted)
	}
	seen := map[string]int{}
	for line := range strings.SplitSeq(out.String(), "\n") {
		var m struct{ Content string }
		if json.Unmarshal([]byte(line), &m) == nil && strings.HasPrefix(m.Content, "word ") {
			seen[m.Content]++
		}
	}
	if len(seen) != before {
		t.Errorf("the export holds %d of the %d messages committed before it", len(seen), before)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("a message is in the export %d times: %.60s…", n, k)
		}
	}
}
