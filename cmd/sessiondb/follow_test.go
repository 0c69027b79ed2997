package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// `sessiondb follow` on a PostgreSQL server: a message each other
// client's `append` commits is printed once, in order, woken by the
// commit's NOTIFY; canceling (Ctrl-C) ends it with exit 0.
// (tests/follow_test.go runs follow as a real process on a file.)
func TestFollow_OnServer(t *testing.T) {
	u := serverURL(t)
	if code, _, stderr := runCLI(t, u, "session", "new", "--id", "chat"); code != exitOK {
		t.Fatalf("session new: %d %s", code, stderr)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	exited := make(chan int, 1)
	var errOut strings.Builder
	go func() {
		exited <- run(ctx, []string{"--db", u, "--json", "follow", "chat", "--after", "0"}, strings.NewReader(""), pw, &errOut)
		pw.Close()
	}()
	lines := make(chan messageJSON, 16)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var m messageJSON
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("follow printed %q: %v", sc.Text(), err)
			}
			lines <- m
		}
		close(lines)
	}()
	for i := range 5 {
		content := fmt.Sprintf("from another client %d", i)
		code, stdout, stderr := runCLI(t, u, "append", "chat", "--role", "user", "--content", content)
		if code != exitOK {
			t.Fatalf("append: %d %s", code, stderr)
		}
		select {
		case m := <-lines:
			if m.Content != content || fmt.Sprint(m.ID) != strings.TrimSpace(stdout) {
				t.Fatalf("follow printed %d %q, want %s %q", m.ID, m.Content, strings.TrimSpace(stdout), content)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("follow printed nothing within 3 s of append %d (stderr %q)", i, errOut.String())
		}
	}
	cancel()
	select {
	case code := <-exited:
		if code != exitOK {
			t.Fatalf("follow after cancel: exit %d, stderr %q", code, errOut.String())
		}
	case <-time.After(3 * time.Second):
		t.Fatal("follow did not end after cancel")
	}
	for m := range lines {
		t.Errorf("follow printed more than was appended: %+v", m)
	}
}
