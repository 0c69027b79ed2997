package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/db"
)

// runCLI runs one command line against the database at path.
func runCLI(t *testing.T, path string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	code = run(t.Context(), append([]string{"--db", path}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// withStore opens the database at path for setup the CLI cannot do, and
// closes it before the CLI runs.
func withStore(t *testing.T, path string, fn func(s *db.Store) error) {
	t.Helper()
	s, err := db.Open(t.Context(), path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := fn(s); err != nil {
		t.Fatal(err)
	}
}

func TestTitleCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	steps := []struct {
		name   string
		args   []string
		code   int
		stdout string // exact
		stderr string // substring, unless empty
	}{
		{"NewSession", []string{"session", "new", "--id", "s1"}, 0, "s1\n", ""},
		{"NewOther", []string{"session", "new", "--id", "s2", "--title", "Taken"}, 0, "s2\n", ""},
		{"ShowNone", []string{"title", "s1"}, 0, "", ""},
		{"Set", []string{"title", "s1", "  Fix the build "}, 0, "Fix the build\n", ""},
		{"Show", []string{"title", "s1"}, 0, "Fix the build\n", ""},
		{"ShowJSON", []string{"title", "s1", "--json"}, 0,
			"{\n  \"session_id\": \"s1\",\n  \"title\": \"Fix the build\",\n  \"title_rank\": \"user\"\n}\n", ""},
		{"Taken", []string{"title", "s1", "Taken"}, 1, "", `already used by session "s2"`},
		{"TooLong", []string{"title", "s1", strings.Repeat("x", 101)}, 2, "", "longer than 100"},
		{"OnlyInvisibleClears", []string{"title", "s1", " \u200b\t "}, 0, "", ""},
		{"ShowCleared", []string{"title", "s1"}, 0, "", ""},
		{"SetAgain", []string{"title", "s1", "Fix\u00a0the  build"}, 0, "Fix the build\n", ""},
		{"ShowSanitised", []string{"title", "s1"}, 0, "Fix the build\n", ""},
		{"UnknownSession", []string{"title", "ghost"}, 3, "", "not found"},
		{"NoArguments", []string{"title"}, 2, "", "expected 1 to 2 arguments"},
		{"Clear", []string{"title", "s1", ""}, 0, "", ""},
		{"ShowClearedJSON", []string{"--json", "title", "s1"}, 0,
			"{\n  \"session_id\": \"s1\",\n  \"title\": \"\",\n  \"title_rank\": \"derived\"\n}\n", ""},
	}
	for _, st := range steps {
		code, stdout, stderr := runCLI(t, path, st.args...)
		if code != st.code || stdout != st.stdout || !strings.Contains(stderr, st.stderr) {
			t.Errorf("%s: sessiondb %q = %d, stdout %q, stderr %q; want %d, %q, stderr containing %q",
				st.name, st.args, code, stdout, stderr, st.code, st.stdout, st.stderr)
		}
	}
}

func TestUsageCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	withStore(t, path, func(s *db.Store) error {
		for _, n := range []db.NewSession{{ID: "s1", Source: "cli"}, {ID: "s2", Source: "gateway"},
			{ID: "s1-sub", Source: "cli", ParentID: "s1", Kind: db.ChildDelegate}} {
			if _, err := s.CreateSession(t.Context(), n); err != nil {
				return err
			}
		}
		for _, r := range []struct {
			id string
			up db.UsageUpdate
		}{
			{"s1", db.UsageUpdate{Model: "large", Usage: db.Usage{InputTokens: 100, OutputTokens: 10, APICalls: 1, EstimatedCostUSD: 0.5}}},
			{"s1", db.UsageUpdate{Model: "small", Task: "title", Usage: db.Usage{InputTokens: 7, APICalls: 1}, Billing: db.Billing{Provider: "anthropic"}}},
			{"s2", db.UsageUpdate{Model: "large", Usage: db.Usage{InputTokens: 1000, APICalls: 2, ActualCostUSD: 2}, Billing: db.Billing{Provider: "openrouter"}}},
			{"s1-sub", db.UsageUpdate{Model: "large", Usage: db.Usage{InputTokens: 20, APICalls: 1}, Billing: db.Billing{Provider: "openrouter", Mode: "api_key"}}},
		} {
			if err := s.RecordUsage(t.Context(), r.id, r.up); err != nil {
				return err
			}
		}
		return nil
	})

	code, stdout, stderr := runCLI(t, path, "usage", "s1")
	want := "MODEL  TASK       ROUTE      INPUT  OUTPUT  CACHE READ  CACHE WRITE  REASONING  CALLS  EST. USD  ACTUAL USD\n" +
		"large  -          -          100    10      0           0            0          1      0.5000    0.0000\n" +
		"small  title      anthropic  7      0       0           0            0          1      0.0000    0.0000\n" +
		"total  main loop             100    10      0           0            0          1      0.5000    0.0000\n"
	if code != 0 || stdout != want {
		t.Errorf("usage s1 = %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}
	code, stdout, stderr = runCLI(t, path, "usage", "s1-sub", "--tree")
	want = "delegation tree of s1: 2 sessions (s1, s1-sub)\n" +
		"MODEL  TASK       ROUTE               INPUT  OUTPUT  CACHE READ  CACHE WRITE  REASONING  CALLS  EST. USD  ACTUAL USD\n" +
		"large  -          -                   100    10      0           0            0          1      0.5000    0.0000\n" +
		"large  -          openrouter api_key  20     0       0           0            0          1      0.0000    0.0000\n" +
		"small  title      anthropic           7      0       0           0            0          1      0.0000    0.0000\n" +
		"total  main loop                      120    10      0           0            0          2      0.5000    0.0000\n" +
		"total  auxiliary                      7      0       0           0            0          1      0.0000    0.0000\n"
	if code != 0 || stdout != want {
		t.Errorf("usage s1-sub --tree = %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}

	type totals struct {
		InputTokens int64   `json:"input_tokens"`
		APICalls    int64   `json:"api_calls"`
		ActualCost  float64 `json:"actual_cost_usd"`
	}
	type modelRow struct {
		Model       string `json:"model"`
		Task        string `json:"task"`
		InputTokens int64  `json:"input_tokens"`
		FirstSeen   string `json:"first_seen_at"`
		Provider    string `json:"billing_provider"`
		Mode        string `json:"billing_mode"`
	}
	type report struct {
		SessionID  string     `json:"session_id"`
		RootID     string     `json:"root_session_id"`
		SessionIDs []string   `json:"session_ids"`
		Total      totals     `json:"total"`
		Auxiliary  *totals    `json:"auxiliary"`
		Models     []modelRow `json:"models"`
	}
	decode := func(args ...string) report {
		t.Helper()
		code, stdout, stderr := runCLI(t, path, append([]string{"--json"}, args...)...)
		if code != 0 {
			t.Fatalf("sessiondb --json %q = %d: %s", args, code, stderr)
		}
		var r report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("sessiondb --json %q: %v\n%s", args, err, stdout)
		}
		for i := range r.Models {
			if _, err := time.Parse(time.RFC3339, r.Models[i].FirstSeen); err != nil {
				t.Errorf("first_seen_at %q: %v", r.Models[i].FirstSeen, err)
			}
			r.Models[i].FirstSeen = ""
		}
		return r
	}
	large := func(in int64) modelRow { return modelRow{Model: "large", InputTokens: in} }
	title := modelRow{Model: "small", Task: "title", InputTokens: 7}
	routed := func(r modelRow, provider, mode string) modelRow { r.Provider, r.Mode = provider, mode; return r }
	tests := []struct {
		name string
		args []string
		want report // first_seen_at cleared
	}{
		{"Store", []string{"usage"}, report{Total: totals{1120, 4, 2}, Models: []modelRow{large(1120), title}}},
		{"Session", []string{"usage", "s2"}, report{SessionID: "s2", Total: totals{1000, 2, 2}, Models: []modelRow{routed(large(1000), "openrouter", "")}}},
		{"Tree", []string{"usage", "s1", "--tree"}, report{SessionID: "s1", RootID: "s1", SessionIDs: []string{"s1", "s1-sub"},
			Total: totals{120, 2, 0}, Auxiliary: &totals{7, 1, 0},
			Models: []modelRow{large(100), routed(large(20), "openrouter", "api_key"), routed(title, "anthropic", "")}}},
		{"Source", []string{"usage", "--source", "cli"}, report{Total: totals{120, 2, 0}, Models: []modelRow{large(120), title}}},
		{"SinceFuture", []string{"usage", "--since", "2999-01-01"}, report{Models: []modelRow{}}},
		{"SinceHour", []string{"usage", "--since", "1h", "--source", "gateway"}, report{Total: totals{1000, 2, 2}, Models: []modelRow{large(1000)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, decode(tt.args...)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	code, stdout, stderr = runCLI(t, path, "usage", "--by", "provider")
	want = "PROVIDER    INPUT  OUTPUT  CACHE READ  CACHE WRITE  REASONING  CALLS  EST. USD  ACTUAL USD\n" +
		"-           100    10      0           0            0          1      0.5000    0.0000\n" +
		"anthropic   7      0       0           0            0          1      0.0000    0.0000\n" +
		"openrouter  1020   0       0           0            0          3      0.0000    2.0000\n"
	if code != 0 || stdout != want {
		t.Errorf("usage --by provider = %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}
	code, stdout, stderr = runCLI(t, path, "--json", "usage", "--by", "provider", "--source", "gateway")
	var byProvider struct {
		Providers []struct {
			Provider    string `json:"provider"`
			InputTokens int64  `json:"input_tokens"`
		} `json:"providers"`
	}
	if err := json.Unmarshal([]byte(stdout), &byProvider); code != 0 || err != nil {
		t.Fatalf("usage --by provider --json = %d (%v), stderr %q:\n%s", code, err, stderr, stdout)
	}
	if len(byProvider.Providers) != 1 || byProvider.Providers[0].Provider != "openrouter" || byProvider.Providers[0].InputTokens != 1000 {
		t.Errorf("usage --by provider --source gateway = %+v, want openrouter's 1000 input tokens alone", byProvider.Providers)
	}

	for _, bad := range []struct {
		args []string
		code int
	}{
		{[]string{"usage", "ghost"}, 3},
		{[]string{"usage", "--by", "colour"}, 2},
		{[]string{"usage", "s1", "--by", "provider"}, 2},
		{[]string{"usage", "s1", "--source", "cli"}, 2},
		{[]string{"usage", "--since", "yesterday"}, 2},
		{[]string{"usage", "a", "b"}, 2},
		{[]string{"usage", "--tree"}, 2},
		{[]string{"usage", "ghost", "--tree"}, 3},
	} {
		if code, _, stderr := runCLI(t, path, bad.args...); code != bad.code {
			t.Errorf("sessiondb %q = %d (%s), want %d", bad.args, code, stderr, bad.code)
		}
	}
}

func TestHandoffCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if code, _, stderr := runCLI(t, path, "session", "new", "--id", "s1"); code != 0 {
		t.Fatal(stderr)
	}
	if code, stdout, _ := runCLI(t, path, "handoff", "s1"); code != 0 || stdout != "state:  none\n" {
		t.Errorf("handoff of a fresh session = %d %q", code, stdout)
	}
	withStore(t, path, func(s *db.Store) error {
		if err := s.RequestHandoff(t.Context(), "s1", "telegram"); err != nil {
			return err
		}
		if _, err := s.ClaimHandoff(t.Context(), "s1", "worker-1"); err != nil {
			return err
		}
		return s.FailHandoff(t.Context(), "s1", "worker-1", "chat not found")
	})
	code, stdout, _ := runCLI(t, path, "handoff", "s1")
	for _, line := range []string{"state:     failed\n", "platform:  telegram\n", "holder:    worker-1\n", "error:     chat not found\n", "updated:   20"} {
		if code != 0 || !strings.Contains(stdout, line) {
			t.Errorf("handoff = %d, output %q lacks %q", code, stdout, line)
		}
	}
	code, stdout, _ = runCLI(t, path, "--json", "handoff", "s1")
	var got map[string]string
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 {
		t.Fatalf("handoff --json = %d %v: %s", code, err, stdout)
	}
	if _, err := time.Parse(time.RFC3339, got["updated_at"]); err != nil {
		t.Errorf("updated_at %q: %v", got["updated_at"], err)
	}
	delete(got, "updated_at")
	want := map[string]string{"session_id": "s1", "state": "failed", "platform": "telegram", "holder": "worker-1", "error": "chat not found"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handoff --json (-want +got):\n%s", diff)
	}
	if code, _, _ := runCLI(t, path, "handoff", "ghost"); code != 3 {
		t.Errorf("handoff of an unknown session = %d, want 3", code)
	}
	if code, _, _ := runCLI(t, path, "handoff"); code != 2 {
		t.Errorf("handoff without a session = %d, want 2", code)
	}
}
