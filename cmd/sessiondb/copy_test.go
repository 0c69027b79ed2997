package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/db"
)

// copyResult is copy --json's summary.
type copyResult struct {
	Copied   int   `json:"copied"`
	ToppedUp int   `json:"topped_up"`
	Skipped  int   `json:"skipped"`
	Detached int   `json:"detached"`
	Messages int64 `json:"messages"`
}

func copyStores(t *testing.T, from, to string) copyResult {
	t.Helper()
	code, stdout, stderr := runCLI(t, from, "--json", "copy", "--from", from, "--to", to)
	var r copyResult
	if err := json.Unmarshal([]byte(stdout), &r); code != 0 || err != nil {
		t.Fatalf("copy --from %s --to %s = %d, %v: stdout %q, stderr %q", from, to, code, err, stdout, stderr)
	}
	return r
}

func exportOf(t *testing.T, location string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, location, "export")
	if code != 0 {
		t.Fatalf("export %s = %d: %q", location, code, stderr)
	}
	return stdout
}

// A demo store (with a branch, usage and a rewound turn) copied to
// PostgreSQL and back to a new file exports byte for byte as the original,
// and the server's copy exports the same; a second copy either way copies
// nothing and changes nothing.
func TestCopy_FileToServerAndBack(t *testing.T) {
	u := serverURL(t)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.db"), filepath.Join(dir, "second.db")
	if code, _, stderr := runCLI(t, first, "demo"); code != 0 {
		t.Fatalf("demo: %d %q", code, stderr)
	}
	for _, args := range [][]string{
		{"session", "new", "--id", "branch", "--parent", "demo-trip", "--kind", "branch"},
		{"append", "branch", "--role", "user", "--content", "and a day in Sintra?"},
	} {
		if code, _, stderr := runCLI(t, first, args...); code != 0 {
			t.Fatalf("%q: %d %q", args, code, stderr)
		}
	}
	withStore(t, first, func(s *db.Store) error {
		// One model through two billing routes: two rows, each copied
		// with its route, and the session's route (the last one).
		for _, b := range []db.Billing{{Provider: "anthropic", Mode: "api_key", CostStatus: "actual"},
			{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1"}} {
			if err := s.RecordUsage(t.Context(), "branch", db.UsageUpdate{Model: "m1", Billing: b,
				Usage: db.Usage{InputTokens: 120, OutputTokens: 40, APICalls: 1, EstimatedCostUSD: 0.25}}); err != nil {
				return err
			}
		}
		return nil
	})
	want := exportOf(t, first)
	if strings.Count(want, `"billing_provider":"`) != 3 {
		t.Fatalf("the fixture's export should name two usage routes and the session's:\n%s", want)
	}
	if !strings.Contains(want, `"parent_session_id":"demo-trip"`) {
		t.Fatalf("the fixture's export has no lineage to copy:\n%s", want)
	}
	// Each message's UID is in the export, so the comparisons below show
	// that a copy between engines keeps it (issue 35).
	for line := range strings.Lines(want) {
		if strings.Contains(line, `"type":"message"`) && !regexp.MustCompile(`"uid":"[0-9a-f]{32}"}\s*$`).MatchString(line) {
			t.Fatalf("the fixture's export has a message without a UID of its own:\n%s", line)
		}
	}

	toServer := copyStores(t, first, u)
	if toServer.Copied != 4 || toServer.Skipped != 0 || toServer.Detached != 0 || toServer.Messages == 0 {
		t.Errorf("first copy to the server: %+v", toServer)
	}
	if n := serverRows(t, u, "messages"); n != toServer.Messages {
		t.Errorf("the server holds %d messages, copy said %d", n, toServer.Messages)
	}
	if n := serverRows(t, u, "session_model_usage"); n == 0 {
		t.Error("the server holds no usage rows")
	}
	if got := exportOf(t, u); got != want {
		t.Errorf("the server's export differs from the file's:\n%s", cmp.Diff(want, got))
	}
	if again := copyStores(t, first, u); !cmp.Equal(again, copyResult{Skipped: 4}) {
		t.Errorf("second copy to the server: %+v, want nothing copied, 4 skipped", again)
	}
	if n := serverRows(t, u, "messages"); n != toServer.Messages {
		t.Errorf("after a second copy the server holds %d messages, want %d", n, toServer.Messages)
	}
	if got := exportOf(t, u); got != want {
		t.Errorf("a second copy changed the server's store:\n%s", cmp.Diff(want, got))
	}

	if back := copyStores(t, u, second); back.Copied != 4 || back.Messages != toServer.Messages {
		t.Errorf("copy back to a file: %+v, want %d sessions, %d messages", back, 4, toServer.Messages)
	}
	if got := exportOf(t, second); got != want {
		t.Errorf("the round trip's export differs from the original's:\n%s", cmp.Diff(want, got))
	}
	if again := copyStores(t, u, second); !cmp.Equal(again, copyResult{Skipped: 4}) {
		t.Errorf("second copy back: %+v, want nothing copied, 4 skipped", again)
	}
}

// Copying between two files needs no server; a re-run copies only what is
// new: new sessions, and the messages appended to copied ones since.
func TestCopy_FileToFileCopiesOnlyWhatIsNew(t *testing.T) {
	dir := t.TempDir()
	copyTwiceTopsUp(t, filepath.Join(dir, "a.db"), filepath.Join(dir, "sub", "b.db"))
}

// The same from a file to PostgreSQL: the server's rows are the file's.
func TestCopy_FileToServerTopsUp(t *testing.T) {
	u := serverURL(t)
	copyTwiceTopsUp(t, filepath.Join(t.TempDir(), "a.db"), u)
	if n := serverRows(t, u, "messages"); n != 5 {
		t.Errorf("the server holds %d messages, want the source's 5", n)
	}
}

// copyTwiceTopsUp copies a to b, appends to a (a new session, messages on
// one copied session and on another that had none), copies again and
// checks that exactly the new rows came over: b exports as a does.
func copyTwiceTopsUp(t *testing.T, a, b string) {
	t.Helper()
	run := func(args ...string) {
		t.Helper()
		if code, _, stderr := runCLI(t, a, args...); code != 0 {
			t.Fatalf("%q: %d %q", args, code, stderr)
		}
	}
	for _, id := range []string{"s1", "s2"} {
		run("session", "new", "--id", id)
		run("append", id, "--role", "user", "--content", "hello "+id)
	}
	run("session", "new", "--id", "quiet")
	if r := copyStores(t, a, b); !cmp.Equal(r, copyResult{Copied: 3, Messages: 2}) {
		t.Errorf("first copy: %+v", r)
	}
	run("session", "new", "--id", "s3")
	run("append", "s1", "--role", "assistant", "--content", "hi again")
	run("append", "s1", "--role", "user", "--content", "one more", "--key", "k-more")
	run("append", "quiet", "--role", "user", "--content", "at last")
	if r := copyStores(t, a, b); !cmp.Equal(r, copyResult{Copied: 1, ToppedUp: 2, Skipped: 1, Messages: 3}) {
		t.Errorf("copy after new messages: %+v, want s3 copied, s1 and quiet topped up with 3 messages, s2 skipped", r)
	}
	if got, want := exportOf(t, b), exportOf(t, a); got != want {
		t.Errorf("the copy differs:\n%s", cmp.Diff(want, got))
	}
	if r := copyStores(t, a, b); !cmp.Equal(r, copyResult{Skipped: 4}) {
		t.Errorf("a third copy: %+v, want nothing written", r)
	}
}

func TestCopy_Usage(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	runCLI(t, a, "init")
	missing := filepath.Join(dir, "missing.db")
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"copy", "--to", a}, exitUsage, "--from and --to are both required"},
		{[]string{"copy", "--from", a}, exitUsage, "--from and --to are both required"},
		{[]string{"copy", "--from", a, "--to", a}, exitUsage, "name the same store"},
		{[]string{"copy", "--from", missing, "--to", filepath.Join(dir, "b.db")}, exitNotFound, "no database at"},
	} {
		code, _, stderr := runCLI(t, a, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("sessiondb %q = %d, %q; want %d, %q", tt.args, code, stderr, tt.code, tt.stderr)
		}
	}
	for _, p := range []string{missing, filepath.Join(dir, "b.db")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused copy created %s", p)
		}
	}
}
