package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// followBound is how long `sessiondb follow` may take to print a message
// another process committed: the promise is tens of milliseconds; the
// bound is loose for a shared machine.
const followBound = 3 * time.Second

// follower is a running `sessiondb follow --json`: each line it prints,
// decoded, arrives on lines.
type follower struct {
	cmd    *exec.Cmd
	lines  chan followed
	stderr *os.File
}

type followed struct {
	ID      int64  `json:"id"`
	Content string `json:"content"`
}

func startFollow(t *testing.T, path string, args ...string) *follower {
	t.Helper()
	cmd := exec.Command(cliPath, append([]string{"--db", path, "--json", "follow"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{cmd: cmd, lines: make(chan followed, 100)}
	if f.stderr, err = os.Create(filepath.Join(t.TempDir(), "stderr")); err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = f.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go func() {
		defer close(f.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m followed
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m.Content = "undecodable line: " + sc.Text()
			}
			f.lines <- m
		}
		io.Copy(io.Discard, stdout)
	}()
	return f
}

func (f *follower) next(t *testing.T) followed {
	t.Helper()
	select {
	case m, ok := <-f.lines:
		if !ok {
			b, _ := os.ReadFile(f.stderr.Name())
			t.Fatalf("follow ended early; stderr: %s", b)
		}
		return m
	case <-time.After(followBound):
		t.Fatalf("follow printed nothing within %v", followBound)
	}
	return followed{}
}

// `sessiondb follow` is a process of its own that prints each message
// another process appends — one line each, once, in order, soon after
// its commit — and on SIGINT exits 0 at once.
func TestCLI_Follow(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "follow.db")
	s, err := db.Open(ctx, path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "chat", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	before, err := s.AppendMessage(ctx, "chat", db.NewMessage{Role: db.RoleUser, Content: "before"})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("from an id", func(t *testing.T) {
		f := startFollow(t, path, "chat", "--after", fmt.Sprint(before))
		var worst time.Duration
		for i := range 10 {
			content := fmt.Sprintf("live %d", i)
			id, err := s.AppendMessage(ctx, "chat", db.NewMessage{Role: db.RoleAssistant, Content: content})
			if err != nil {
				t.Fatal(err)
			}
			committed := time.Now()
			if got := f.next(t); got.ID != id || got.Content != content {
				t.Fatalf("follow printed %d %q, want %d %q", got.ID, got.Content, id, content)
			}
			if i > 0 { // the first waited for the process to start
				worst = max(worst, time.Since(committed))
			}
		}
		t.Logf("slowest line after the commit (the process started): %v", worst)
		interrupted := time.Now()
		if err := f.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		for m := range f.lines {
			t.Errorf("after the last append follow printed %+v", m)
		}
		if err := f.cmd.Wait(); err != nil {
			b, _ := os.ReadFile(f.stderr.Name())
			t.Fatalf("follow after SIGINT: %v (want exit 0); stderr: %s", err, b)
		}
		t.Logf("exited %v after SIGINT", time.Since(interrupted))
	})

	t.Run("from the end by default", func(t *testing.T) {
		f := startFollow(t, path, "chat")
		// The process takes a moment to start; append until it prints. The
		// messages there when it started are never printed, and from the
		// first it prints on every message follows.
		last, err := s.Messages(ctx, "chat", db.MessageQuery{NewestFirst: true, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		var sent []int64
		var first followed
	wait:
		for {
			id, err := s.AppendMessage(ctx, "chat", db.NewMessage{Role: db.RoleUser, Content: "tick"})
			if err != nil {
				t.Fatal(err)
			}
			sent = append(sent, id)
			select {
			case m, ok := <-f.lines:
				if !ok {
					t.Fatal("follow ended early")
				}
				first = m
				break wait
			case <-time.After(300 * time.Millisecond):
			}
			if len(sent) > 30 {
				t.Fatal("follow printed nothing in 9 s of appends")
			}
		}
		if first.ID <= last[0].ID {
			t.Fatalf("follow without --after printed %d, a message there before it started (last %d)", first.ID, last[0].ID)
		}
		for _, id := range sent {
			if id <= first.ID {
				continue
			}
			if got := f.next(t); got.ID != id {
				t.Fatalf("follow printed %d, want %d", got.ID, id)
			}
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			code int
		}{
			{[]string{"nobody"}, 3},               // an unknown session: not_found
			{[]string{"chat", "--after", "x"}, 2}, // not an id: usage
			{[]string{"chat", "--after", "-1"}, 2},
		} {
			r := cli(t, nil, "", append([]string{"--db", path, "follow"}, c.args...)...)
			if r.code != c.code || r.stdout != "" {
				t.Errorf("follow %v: exit %d, stdout %q, stderr %q; want exit %d and no output", c.args, r.code, r.stdout, r.stderr, c.code)
			}
		}
	})
}
