package tests

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// crossProcessWords is how many messages the helper appends.
const crossProcessWords = 300

// appendWords is the helper that appends messages, each with a word of its
// own, and prints "ack <id> <word>" once each append returned.
func appendWords(ctx context.Context, path string) int {
	s, err := db.Open(ctx, path, db.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer s.Close()
	for i := range crossProcessWords {
		word := fmt.Sprintf("xproc%dword", i)
		id, err := s.AppendMessage(ctx, "x", db.NewMessage{Role: db.RoleAssistant, Content: "the other process said " + word})
		if err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			return 1
		}
		fmt.Printf("ack %d %s\n", id, word)
	}
	return 0
}

// A message another process appended is found by this process's very
// next Search, queued for indexing or not, by the word index's route and
// the trigram index's.
func TestSearch_FindsAnotherProcessAppendsAtOnce(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := db.Open(ctx, path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "x", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=^$", path)
	helper.Env = append(os.Environ(), helperEnv+"=append-words")
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	acks, whileQueued := 0, 0
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) != 3 || f[0] != "ack" {
			continue
		}
		id, _ := strconv.ParseInt(f[1], 10, 64)
		acks++
		queued := s.Stats().IndexQueued > 0
		for _, q := range []string{f[2], f[2][1 : len(f[2])-1]} { // a word, a substring
			hits, err := s.Search(ctx, q, db.SearchOptions{Sort: db.SortNewest})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(hits, func(h db.SearchHit) bool { return h.MessageID == id }) {
				t.Errorf("Search(%q) right after the other process's ack: message %d not found", q, id)
			}
		}
		if queued {
			whileQueued++
		}
	}
	if err := helper.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	if acks != crossProcessWords {
		t.Fatalf("%d acks from the helper, want %d", acks, crossProcessWords)
	}
	t.Logf("%d of %d searches ran while rows were queued", whileQueued, acks)
	// Whatever the helper left queued, this store's indexer indexes.
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().IndexQueued > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := s.Stats().IndexQueued; n != 0 {
		t.Errorf("%d rows still queued 10 s after the other process ended", n)
	}
}
