package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cli runs one command line against the database at path.
func cli(t *testing.T, path string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(t.Context(), append([]string{"--db", path}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// searchDB makes a database with two sessions to search.
func searchDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	for _, args := range [][]string{
		{"session", "new", "--id", "s1", "--source", "cli"},
		{"session", "new", "--id", "s2", "--source", "gateway"},
		{"append", "s1", "--role", "user", "--content", "why does the build fail?"},
		{"append", "s1", "--role", "assistant", "--content", "the build fails on gpt-4o's import"},
		{"append", "s1", "--role", "tool", "--tool-name", "shell", "--content", "build ok"},
		{"append", "s2", "--role", "user", "--content", "-foo is a flag-like word"},
	} {
		if code, _, stderr := cli(t, path, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	return path
}

func TestSearchCommand_JSON(t *testing.T) {
	path := searchDB(t)
	type hit struct {
		MessageID int64  `json:"message_id"`
		SessionID string `json:"session_id"`
		Role      string `json:"role"`
		ToolName  string `json:"tool_name"`
		Snippet   string `json:"snippet"`
		Source    string `json:"source"`
		Before    []struct {
			ID   int64  `json:"id"`
			Role string `json:"role"`
		} `json:"before"`
	}
	tests := []struct {
		name string
		args []string
		want []string // "session/role: snippet"
	}{
		{"All", []string{"build", "--sort", "oldest"}, []string{
			"s1/user: why does the >>>build<<< fail?",
			"s1/assistant: the >>>build<<< fails on gpt-4o's import",
			"s1/tool: >>>build<<< ok",
		}},
		{"Roles", []string{"build", "--role", "tool", "--role", "user", "--sort", "newest"}, []string{
			"s1/tool: >>>build<<< ok",
			"s1/user: why does the >>>build<<< fail?",
		}},
		{"Source", []string{"foo", "--source", "gateway"}, []string{"s2/user: ->>>foo<<< is a flag-like word"}},
		{"ExcludeSource", []string{"foo", "--exclude-source", "gateway"}, []string{}},
		{"ExcludeOtherSource", []string{"foo", "--exclude-source", "cli", "--exclude-source", "cron"},
			[]string{"s2/user: ->>>foo<<< is a flag-like word"}},
		{"Session", []string{"build", "--session", "s2"}, []string{}},
		{"Paging", []string{"build", "--sort", "oldest", "--limit", "1", "--offset", "1"}, []string{
			"s1/assistant: the >>>build<<< fails on gpt-4o's import",
		}},
		{"DashQuery", []string{"--", "-foo"}, []string{"s2/user: ->>>foo<<< is a flag-like word"}},
		{"Hyphenated", []string{"gpt-4o", "--json"}, []string{"s1/assistant: the build fails on >>>gpt-4o<<<'s import"}},
		{"Hostile", []string{`NEAR("build`}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, path, append([]string{"--json", "search"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var hits []hit
			if err := json.Unmarshal([]byte(stdout), &hits); err != nil {
				t.Fatalf("output is not a JSON array: %v\n%s", err, stdout)
			}
			got := []string{}
			for _, h := range hits {
				got = append(got, h.SessionID+"/"+h.Role+": "+h.Snippet)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
		})
	}
	// Context: the neighbours travel in the JSON.
	_, stdout, _ := cli(t, path, "--json", "search", "import", "--context", "1")
	var hits []hit
	if err := json.Unmarshal([]byte(stdout), &hits); err != nil || len(hits) != 1 {
		t.Fatalf("context search: %v %s", err, stdout)
	}
	if len(hits[0].Before) != 1 || hits[0].Before[0].Role != "user" {
		t.Errorf("before = %+v, want the user's question", hits[0].Before)
	}
}

func TestSearchCommand_Table(t *testing.T) {
	path := searchDB(t)
	code, stdout, stderr := cli(t, path, "search", "fail", "--context", "1")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header, the hit and its neighbour, got:\n%s", stdout)
	}
	if f := strings.Fields(lines[0]); !cmp.Equal(f, []string{"SESSION", "ROLE", "TIME", "SNIPPET"}) {
		t.Errorf("header %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "s1") || !strings.Contains(lines[1], "user") || !strings.HasSuffix(lines[1], "why does the build fail?") {
		t.Errorf("hit row %q; want the text as stored (a pipe gets no markers)", lines[1])
	}
	if _, stdout, _ := cli(t, path, "search", "fail", "--marks"); !strings.Contains(stdout, "why does the build >>>fail<<<?") {
		t.Errorf("search --marks: %q; want the match between >>> and <<<", stdout)
	}
	if !strings.Contains(lines[2], "assistant: the build fails") {
		t.Errorf("neighbour row %q", lines[2])
	}
	code, stdout, _ = cli(t, path, "search", "nothing-like-this")
	if code != exitOK || stdout != "no matches\n" {
		t.Errorf("no hits: exit %d, %q", code, stdout)
	}
}

func TestSearchCommand_Usage(t *testing.T) {
	path := searchDB(t)
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"NoQuery", []string{"search"}, exitUsage},
		{"TwoQueries", []string{"search", "a", "b"}, exitUsage},
		{"BadSort", []string{"search", "x", "--sort", "random"}, exitUsage},
		{"BadRole", []string{"search", "x", "--role", "robot"}, exitUsage},
		{"NegativeLimit", []string{"search", "x", "--limit", "-1"}, exitUsage},
		{"NegativeOffset", []string{"search", "x", "--offset", "-1"}, exitUsage},
		{"NegativeContext", []string{"search", "x", "--context", "-2"}, exitUsage},
		{"InvalidUTF8", []string{"search", "x\xff"}, exitUsage},
		{"NotANumber", []string{"search", "x", "--limit", "ten"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, _, stderr := cli(t, path, tt.args...); code != tt.code || stderr == "" {
				t.Errorf("exit %d (stderr %q), want %d with a message", code, stderr, tt.code)
			}
		})
	}
}
