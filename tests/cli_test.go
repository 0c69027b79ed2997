package tests

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type cliResult struct {
	stdout, stderr string
	code           int
}

// cli runs the sessiondb binary with a clean environment plus env.
func cli(t *testing.T, env []string, stdin string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(cliPath, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return cliResult{out.String(), errOut.String(), code}
}

// TestCLI walks through every command on one database, checking output and
// exit codes, including what each bad input gets.
func TestCLI(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	steps := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // exact, unless empty
		stderr string // substring, unless empty
	}{
		{name: "Init", args: []string{"init"}, stdout: path + "\n"},
		{name: "NewSession", args: []string{"session", "new", "--id", "s1", "--source", "cli", "--title", "Build fix"}, stdout: "s1\n"},
		{name: "NewSessionTaken", args: []string{"session", "new", "--id", "s1"}, code: 1, stderr: "already exists"},
		{name: "NewChildOfGhost", args: []string{"session", "new", "--id", "c", "--parent", "ghost"}, code: 3, stderr: "ghost"},
		{name: "Append", args: []string{"append", "s1", "--role", "user", "--content", "hello"}, stdout: "1\n"},
		{name: "AppendFlagsFirst", args: []string{"append", "--role", "assistant", "--content", "hi", "s1"}, stdout: "2\n"},
		{name: "AppendStdin", stdin: "from\nstdin", args: []string{"append", "s1", "--role", "tool", "--tool-name", "shell", "--tool-call-id", "c1", "--content-file", "-"}, stdout: "3\n"},
		{name: "AppendKey", args: []string{"append", "s1", "--role", "user", "--content", "once", "--key", "k1"}, stdout: "4\n"},
		{name: "AppendKeyAgain", args: []string{"append", "s1", "--role", "user", "--content", "once", "--key", "k1"}, stdout: "4\n"},
		{name: "AppendUnknownSession", args: []string{"append", "ghost", "--role", "user", "--content", "x"}, code: 3, stderr: "not found"},
		{name: "AppendBadRole", args: []string{"append", "s1", "--role", "robot", "--content", "x"}, code: 2, stderr: "robot"},
		{name: "AppendNoContent", args: []string{"append", "s1", "--role", "user"}, code: 2, stderr: "--content"},
		{name: "AppendBothContents", args: []string{"append", "s1", "--role", "user", "--content", "a", "--content-file", "-"}, code: 2},
		{name: "AppendMissingFile", args: []string{"append", "s1", "--role", "user", "--content-file", "/nonexistent"}, code: 1, stderr: "/nonexistent"},
		{name: "AppendNoSession", args: []string{"append", "--role", "user", "--content", "x"}, code: 2},
		{name: "MessagesUnknown", args: []string{"messages", "ghost"}, code: 3},
		{name: "MetaSet", args: []string{"meta", "set", "owner", "ops team"}},
		{name: "MetaGet", args: []string{"meta", "get", "owner"}, stdout: "ops team\n"},
		{name: "MetaGetMissing", args: []string{"meta", "get", "nope"}, code: 3},
		{name: "MetaBadVerb", args: []string{"meta", "del", "x"}, code: 2},
		{name: "End", args: []string{"session", "end", "s1", "--reason", "done"}, stdout: "ended (done)\n"},
		{name: "EndAgain", args: []string{"session", "end", "s1", "--reason", "other"}, stdout: "already ended (done)\n"},
		{name: "EndNoReason", args: []string{"session", "end", "s1"}, code: 2},
		{name: "EndUnknown", args: []string{"session", "end", "ghost", "--reason", "x"}, code: 3},
		{name: "ShowUnknown", args: []string{"session", "show", "ghost"}, code: 3},
		{name: "UnknownCommand", args: []string{"frobnicate"}, code: 2, stderr: "unknown command"},
		{name: "NoCommand", args: nil, code: 2},
		{name: "UnknownFlag", args: []string{"sessions", "--bogus"}, code: 2},
		{name: "Help", args: []string{"help"}, code: 0},
	}
	for _, st := range steps {
		r := cli(t, env, st.stdin, st.args...)
		if r.code != st.code {
			t.Fatalf("%s: sessiondb %v exited %d, want %d\nstdout: %s\nstderr: %s", st.name, st.args, r.code, st.code, r.stdout, r.stderr)
		}
		if st.stdout != "" && r.stdout != st.stdout {
			t.Errorf("%s: stdout %q, want %q", st.name, r.stdout, st.stdout)
		}
		if st.stderr != "" && !strings.Contains(r.stderr, st.stderr) {
			t.Errorf("%s: stderr %q does not contain %q", st.name, r.stderr, st.stderr)
		}
	}

	// --json: one array of snake_case records.
	var msgs []map[string]any
	r := cli(t, env, "", "messages", "s1", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &msgs); err != nil || r.code != 0 {
		t.Fatalf("messages --json: %v %q", err, r.stdout)
	}
	var contents []string
	for _, m := range msgs {
		contents = append(contents, m["content"].(string))
	}
	if diff := cmp.Diff([]string{"hello", "hi", "from\nstdin", "once"}, contents); diff != "" {
		t.Errorf("messages --json contents (-want +got):\n%s", diff)
	}
	if msgs[2]["tool_name"] != "shell" || msgs[2]["tool_call_id"] != "c1" || msgs[3]["idempotency_key"] != "k1" {
		t.Errorf("snake_case fields missing: %v", msgs)
	}
	var sessions []map[string]any
	r = cli(t, env, "", "--json", "sessions", "--ended")
	if err := json.Unmarshal([]byte(r.stdout), &sessions); err != nil || len(sessions) != 1 {
		t.Fatalf("sessions --json: %v %q", err, r.stdout)
	}
	s := sessions[0]
	if s["id"] != "s1" || s["message_count"] != 4.0 || s["end_reason"] != "done" || s["title"] != "Build fix" {
		t.Errorf("session record %v", s)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("database file: %v mode %v, want 0600", err, fi.Mode().Perm())
	}
}

func TestCLI_DefaultPaths(t *testing.T) {
	home := t.TempDir()
	state := t.TempDir()
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"Home", []string{"HOME=" + home}, filepath.Join(home, ".local", "state", "sessiondb", "state.db")},
		{"XDGStateHome", []string{"HOME=" + home, "XDG_STATE_HOME=" + state}, filepath.Join(state, "sessiondb", "state.db")},
		{"EnvPath", []string{"HOME=" + home, "XDG_STATE_HOME=" + state, "SESSIONDB_PATH=" + filepath.Join(state, "env.db")}, filepath.Join(state, "env.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, tt.env, "", "init")
			if r.code != 0 || r.stdout != tt.want+"\n" {
				t.Errorf("init = %d %q %q, want %q", r.code, r.stdout, r.stderr, tt.want)
			}
			if _, err := os.Stat(tt.want); err != nil {
				t.Error(err)
			}
		})
	}
	flagPath := filepath.Join(state, "flag.db")
	if r := cli(t, []string{"SESSIONDB_PATH=/nonexistent/x.db"}, "", "--db", flagPath, "init"); r.stdout != flagPath+"\n" {
		t.Errorf("--db did not win over $SESSIONDB_PATH: %q %q", r.stdout, r.stderr)
	}
}

func TestCLI_LockedExitCode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	if r := cli(t, env, "", "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	_, wait := holdWriteLock(t, path, 2*time.Second)
	r := cli(t, append(env, "SESSIONDB_WRITE_PATIENCE=300ms"), "", "meta", "set", "k", "v")
	if r.code != 75 || !strings.Contains(r.stderr, "healthy") {
		t.Errorf("meta set under a held lock = %d %q, want 75 and the cause", r.code, r.stderr)
	}
	r = cli(t, env, "", "--write-patience", "10s", "meta", "set", "k", "v")
	if r.code != 0 {
		t.Errorf("meta set with patience beyond the hold = %d %q", r.code, r.stderr)
	}
	wait()
	for _, bad := range []string{"abc", "-1s", "0"} {
		if r := cli(t, append(env, "SESSIONDB_OPEN_PATIENCE="+bad), "", "init"); r.code != 2 {
			t.Errorf("SESSIONDB_OPEN_PATIENCE=%s: exit %d, want 2", bad, r.code)
		}
	}
}

func TestCLI_Demo(t *testing.T) {
	env := []string{"SESSIONDB_PATH=" + filepath.Join(t.TempDir(), "state.db")}
	r := cli(t, env, "", "demo", "--writers", "4")
	if r.code != 0 || !strings.Contains(r.stdout, "3 conversations written by 4 concurrent writers") {
		t.Fatalf("demo = %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	counts := func() map[string]float64 {
		var ss []map[string]any
		r := cli(t, env, "", "sessions", "--json")
		if err := json.Unmarshal([]byte(r.stdout), &ss); err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, s := range ss {
			out[s["id"].(string)] = s["message_count"].(float64)
		}
		return out
	}
	want := map[string]float64{"demo-flaky-test": 7, "demo-trip": 6, "demo-paper": 4}
	if diff := cmp.Diff(want, counts()); diff != "" {
		t.Errorf("after demo (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.stdout, "(17 new messages)") {
		t.Errorf("first demo: %q; want it to say what it wrote", r.stdout)
	}
	if r := cli(t, env, "", "demo"); r.code != 0 || !strings.Contains(r.stdout, "nothing written: the 3 demo conversations were there already") ||
		strings.Contains(r.stdout, "written by") {
		t.Fatalf("second demo = %d; want it to say it wrote nothing:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if diff := cmp.Diff(want, counts()); diff != "" {
		t.Errorf("a second demo duplicated turns (-want +got):\n%s", diff)
	}
	// The demo's models reported usage, once: two runs, the same totals,
	// and never a row of zeros.
	r = cli(t, env, "", "usage")
	if r.code != 0 || !regexp.MustCompile(`(?m)^total\s+main loop\s+382\s+164\s+0\s+0\s+0\s+8\s`).MatchString(r.stdout) {
		t.Errorf("usage after two demos:\n%s%s", r.stdout, r.stderr)
	}
	empty := []string{"SESSIONDB_PATH=" + filepath.Join(t.TempDir(), "empty.db")}
	cli(t, empty, "", "init")
	if r := cli(t, empty, "", "usage"); r.code != 0 || !strings.HasPrefix(r.stdout, "no usage recorded") {
		t.Errorf("usage of an empty store: %d %q, want it to say none is recorded", r.code, r.stdout)
	}
}

func TestCLI_NotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	os.WriteFile(path, []byte(strings.Repeat("not a database; ", 200)), 0o600)
	r := cli(t, []string{"SESSIONDB_PATH=" + path}, "", "sessions")
	if r.code != 4 || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "not a sessiondb store") || !strings.Contains(r.stderr, "not a SQLite file") {
		t.Errorf("sessions on a garbage file = %d %q, want exit 4 (not a store)", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "not a database") {
		t.Error("the refused file was changed")
	}
}

func TestCLI_Verify(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	if r := cli(t, []string{"SESSIONDB_PATH=" + good}, "", "demo"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, []byte(strings.Repeat("junk", 100)), 0o600)
	tests := []struct {
		path   string
		code   int
		health string
	}{
		{good, 0, "verified"},
		{garbage, 4, "not a store"},
		{filepath.Join(dir, "absent.db"), 1, "absent"},
		{dir, 4, "not a store"},
	}
	for _, tt := range tests {
		r := cli(t, nil, "", "--db", tt.path, "verify", "--json")
		if r.code != tt.code {
			t.Errorf("verify %s: exit %d, want %d (%s)", tt.path, r.code, tt.code, r.stderr)
			continue
		}
		if tt.health == "" {
			continue
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got["health"] != tt.health {
			t.Errorf("verify %s --json = %q (%v), want health %q", tt.path, r.stdout, err, tt.health)
		}
	}
}

func TestCLI_Repair(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	env := []string{"SESSIONDB_PATH=" + path}
	if r := cli(t, env, "", "demo"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	var rep map[string]any
	r := cli(t, env, "", "repair", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || rep["strategy"] != "none" || rep["repaired"] != false {
		t.Errorf("repair of a healthy file = %d %q %v", r.code, r.stdout, err)
	}
	// A store zeroed by a power cut is ours and damaged: repair moves it
	// aside (keeping its bytes) and starts a fresh one. (A file that is
	// not a store is refused: TestCLI_NotAStoreIsNeverChanged.)
	fi, _ := os.Stat(path)
	os.WriteFile(path, make([]byte, fi.Size()), 0o600)
	if r := cli(t, env, "", "sessions"); r.code != 1 || !strings.Contains(r.stderr, "damaged") {
		t.Errorf("sessions on a zeroed store = %d %q, want 1 (damaged; a read changes nothing)", r.code, r.stderr)
	}
	r = cli(t, env, "", "repair", "--json")
	rep = nil
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || rep["strategy"] != "move-aside" || rep["repaired"] != true {
		t.Fatalf("repair of a zeroed store = %d %q %v", r.code, r.stdout, err)
	}
	if b, err := os.ReadFile(rep["backup_path"].(string)); err != nil || int64(len(b)) != fi.Size() {
		t.Errorf("the zeroed store was not kept at %v: %v", rep["backup_path"], err)
	}
	if r := cli(t, env, "", "session", "new"); r.code != 0 {
		t.Errorf("a write after repair = %d %s", r.code, r.stderr)
	}
}

func TestCLI_Bench(t *testing.T) {
	r := cli(t, nil, "", "bench", "--json", "--appends", "60", "--appenders", "1,4", "--rows", "300")
	if r.code != 0 {
		t.Fatalf("bench = %d %s", r.code, r.stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 9 {
		t.Fatalf("bench --json: %d rows, %v\n%s", len(rows), err, r.stdout)
	}
	for _, row := range rows {
		if row["per_second"].(float64) <= 0 {
			t.Errorf("workload %v measured nothing", row["name"])
		}
	}
	if rows[0]["baseline"] != "raw driver append, serial" || rows[0]["ratio"].(float64) <= 0 {
		t.Errorf("the serial append has no raw-driver ratio: %v", rows[0])
	}
	if r := cli(t, nil, "", "bench", "--appenders", "0"); r.code != 2 {
		t.Errorf("bench --appenders 0 = %d, want 2", r.code)
	}
}
