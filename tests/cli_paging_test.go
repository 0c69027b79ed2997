package tests

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/db"
)

// pagingStore makes a store with sessions s0..s4 (source "a" for s0, s1)
// and, in s0, n messages that all contain "needle".
func pagingStore(t *testing.T, n int) (env []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	for i := range 5 {
		source := "b"
		if i < 2 {
			source = "a"
		}
		if _, err := s.CreateSession(t.Context(), db.NewSession{ID: fmt.Sprintf("s%d", i), Source: source}); err != nil {
			t.Fatal(err)
		}
	}
	for start := 0; start < n; start += 500 {
		var batch []db.NewMessage
		for i := start; i < min(n, start+500); i++ {
			batch = append(batch, db.NewMessage{Role: db.RoleUser, Content: fmt.Sprintf("needle number %d", i+1)})
		}
		if _, err := s.AppendMessages(t.Context(), "s0", batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return []string{"SESSIONDB_PATH=" + path}
}

// TestCLI_NoSilentTruncation: a page that stops at its limit says so on
// stderr, with the flag that fetches the next page (standard output stays
// the records: a JSON array stays one array); following the cursor visits
// every record once, and a page that reaches the end says nothing.
func TestCLI_NoSilentTruncation(t *testing.T) {
	env := pagingStore(t, 7)
	tests := []struct {
		name       string
		args       []string
		ids        string // the ids (messages) or session ids printed
		notice     string // exact stderr
		jsonNotice string // exact stderr with --json
	}{
		{"MessagesFirstPage", []string{"messages", "s0", "--limit", "3"}, "1 2 3",
			"(more messages: next page with --after 3, all with --all)\n",
			`{"more":true,"next_after":3,"next":"--after 3"}` + "\n"},
		{"MessagesNextPage", []string{"messages", "s0", "--limit", "3", "--after", "3"}, "4 5 6",
			"(more messages: next page with --after 6, all with --all)\n",
			`{"more":true,"next_after":6,"next":"--after 6"}` + "\n"},
		{"MessagesLastPage", []string{"messages", "s0", "--limit", "3", "--after", "6"}, "7", "", ""},
		{"MessagesExactlyAll", []string{"messages", "s0", "--limit", "7"}, "1 2 3 4 5 6 7", "", ""},
		{"MessagesNewestFirst", []string{"messages", "s0", "--limit", "3", "--newest-first"}, "7 6 5",
			"(more messages: next page with --before 5, all with --all)\n",
			`{"more":true,"next_before":5,"next":"--before 5"}` + "\n"},
		{"MessagesNewestNext", []string{"messages", "s0", "--limit", "3", "--newest-first", "--before", "5"}, "4 3 2",
			"(more messages: next page with --before 2, all with --all)\n",
			`{"more":true,"next_before":2,"next":"--before 2"}` + "\n"},
		{"MessagesAll", []string{"messages", "s0", "--all", "--limit", "2"}, "1 2 3 4 5 6 7", "", ""},
		{"SessionsCounted", []string{"sessions", "--limit", "2"}, "s4 s3",
			"(3 more sessions: next page with --offset 2, all with --all)\n",
			`{"more":true,"remaining":3,"next_offset":2,"next":"--offset 2"}` + "\n"},
		{"SessionsLastOne", []string{"sessions", "--limit", "2", "--offset", "3"}, "s1 s0", "", ""},
		{"SessionsOneMore", []string{"sessions", "--limit", "3", "--offset", "1"}, "s3 s2 s1",
			"(1 more session: next page with --offset 4, all with --all)\n",
			`{"more":true,"remaining":1,"next_offset":4,"next":"--offset 4"}` + "\n"},
		{"SessionsFiltered", []string{"sessions", "--limit", "1", "--source", "a"}, "s1",
			"(more sessions: next page with --offset 1, all with --all)\n",
			`{"more":true,"next_offset":1,"next":"--offset 1"}` + "\n"},
		{"SessionsAll", []string{"sessions", "--all"}, "s4 s3 s2 s1 s0", "", ""},
		{"SearchFirstPage", []string{"search", "needle", "--sort", "oldest", "--limit", "4"}, "1 2 3 4",
			"(more hits: next page with --offset 4, all with --all)\n",
			`{"more":true,"next_offset":4,"next":"--offset 4"}` + "\n"},
		{"SearchLastPage", []string{"search", "needle", "--sort", "oldest", "--limit", "4", "--offset", "4"}, "5 6 7", "", ""},
		{"SearchAll", []string{"search", "needle", "--sort", "oldest", "--all"}, "1 2 3 4 5 6 7", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, env, "", tt.args...)
			if r.code != 0 || r.stderr != tt.notice {
				t.Errorf("sessiondb %v: exit %d, stderr %q; want 0 and %q", tt.args, r.code, r.stderr, tt.notice)
			}
			if got := textIDs(tt.args[0], r.stdout); got != tt.ids {
				t.Errorf("sessiondb %v printed %q, want %q:\n%s", tt.args, got, tt.ids, r.stdout)
			}
			r = cli(t, env, "", append(tt.args, "--json")...)
			var records []map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &records); err != nil || r.code != 0 || r.stderr != tt.jsonNotice {
				t.Fatalf("sessiondb %v --json: exit %d, %v, stderr %q; want one JSON array and %q", tt.args, r.code, err, r.stderr, tt.jsonNotice)
			}
			var ids []string
			for _, rec := range records {
				switch {
				case rec["message_id"] != nil:
					ids = append(ids, fmt.Sprint(rec["message_id"]))
				case tt.args[0] == "messages":
					ids = append(ids, fmt.Sprint(rec["id"]))
				default:
					ids = append(ids, rec["id"].(string))
				}
			}
			if got := strings.Join(ids, " "); got != tt.ids {
				t.Errorf("sessiondb %v --json: ids %q, want %q", tt.args, got, tt.ids)
			}
		})
	}
}

// textIDs reads the records' ids from a text listing: "#ID" headers of
// messages, the first column of sessions, the snippet's number of search.
func textIDs(cmd, out string) string {
	var ids []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case cmd == "messages" && strings.HasPrefix(f[0], "#"):
			ids = append(ids, f[0][1:])
		case cmd == "sessions" && f[0] != "ID":
			ids = append(ids, f[0])
		case cmd == "search" && f[0] != "SESSION":
			ids = append(ids, f[len(f)-1])
		}
	}
	return strings.Join(ids, " ")
}

// TestCLI_AllPagesThroughLargeLists: --all crosses the internal page size
// (1000 messages, 200 hits) and yields every record exactly once, in order.
func TestCLI_AllPagesThroughLargeLists(t *testing.T) {
	const n = 2345
	env := pagingStore(t, n)
	var want []float64
	for i := 1; i <= n; i++ {
		want = append(want, float64(i))
	}
	for _, args := range [][]string{
		{"messages", "s0", "--all", "--json"},
		{"search", "needle", "--sort", "oldest", "--all", "--json"},
	} {
		r := cli(t, env, "", args...)
		var records []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &records); err != nil || r.code != 0 || r.stderr != "" {
			t.Fatalf("sessiondb %v: exit %d, %v, stderr %q", args, r.code, err, r.stderr)
		}
		var got []float64
		for _, rec := range records {
			id, _ := rec["id"].(float64)
			if args[0] == "search" {
				id, _ = rec["message_id"].(float64)
			}
			got = append(got, id)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sessiondb %v ids (-want +got):\n%s", args, diff)
		}
	}
	// Text: every message once, the header of the table once.
	r := cli(t, env, "", "messages", "s0", "--all")
	if c := strings.Count(r.stdout, "\n#"); c != n-1 || r.code != 0 {
		t.Errorf("messages --all printed %d headers, want %d (exit %d)", c+1, n, r.code)
	}
	r = cli(t, env, "", "search", "needle", "--all")
	if c := strings.Count(r.stdout, "SNIPPET"); c != 1 || strings.Count(r.stdout, "\n") != n+1 {
		t.Errorf("search --all: %d headers, %d lines; want 1 and %d", c, strings.Count(r.stdout, "\n"), n+1)
	}
}
