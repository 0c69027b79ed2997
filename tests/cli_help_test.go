package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// TestCLI_Help: every way of asking for a command's help prints its usage
// and every flag with its default, on stdout, and exits 0.
func TestCLI_Help(t *testing.T) {
	env := []string{"SESSIONDB_PATH=" + filepath.Join(t.TempDir(), "state.db")}
	tests := []struct {
		name string
		args []string
		want []string // substrings of stdout
	}{
		{"SearchDashH", []string{"search", "-h"}, []string{"usage: sessiondb search QUERY", "--limit N", "(default: 20)", "--sort SORT", `(default: "relevance")`, "--context N", "--write-patience D"}},
		{"SearchDashDashHelp", []string{"search", "--help"}, []string{"usage: sessiondb search QUERY", "--offset N", "(default: 0)"}},
		{"HelpSearch", []string{"help", "search"}, []string{"usage: sessiondb search QUERY", "--role ROLE", "--source SOURCE"}},
		{"HelpAfterArgs", []string{"messages", "s1", "--help"}, []string{"usage: sessiondb messages ID|PREFIX", "--limit N", "(default: 1000)"}},
		{"SessionNewHelp", []string{"session", "new", "-h"}, []string{"usage: sessiondb session new", "--source SOURCE", `(default: "cli")`}},
		{"HelpSessionNew", []string{"help", "session", "new"}, []string{"usage: sessiondb session new", "--kind KIND"}},
		{"SessionHelp", []string{"session", "--help"}, []string{"usage: sessiondb session new", "or: sessiondb session show ID", "help session SUBCOMMAND"}},
		{"ExportShortFlag", []string{"help", "export"}, []string{"-o FILE", "--lineage"}},
		{"GlobalDashH", []string{"-h"}, []string{"usage: sessiondb", "commands:", "completion"}},
		{"Help", []string{"help"}, []string{"usage: sessiondb", "search QUERY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, env, "", tt.args...)
			if r.code != 0 {
				t.Fatalf("sessiondb %v exited %d, want 0\nstdout: %s\nstderr: %s", tt.args, r.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("sessiondb %v: stdout does not contain %q:\n%s", tt.args, w, r.stdout)
				}
			}
		})
	}
	// Help never opens the database.
	if _, err := os.Stat(strings.TrimPrefix(env[0], "SESSIONDB_PATH=")); !os.IsNotExist(err) {
		t.Errorf("asking for help created the database: %v", err)
	}
}

// TestCLI_UnknownCommand: a short error with the nearest command, not the
// whole command list.
func TestCLI_UnknownCommand(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serch", "x"}, "did you mean search?"},
		{[]string{"sesions"}, "did you mean sessions?"},
		{[]string{"help", "vacum"}, "did you mean vacuum?"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, tt := range tests {
		r := cli(t, nil, "", tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") > 2 || r.stdout != "" {
			t.Errorf("sessiondb %v: exit %d, stderr %q, stdout %q; want exit 2 and a short %q", tt.args, r.code, r.stderr, r.stdout, tt.want)
		}
	}
	r := cli(t, nil, "", "search", "x", "--bogus")
	if r.code != 2 || !strings.Contains(r.stderr, "-bogus") || !strings.Contains(r.stderr, "help search") {
		t.Errorf("unknown flag: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCLI_Version: version and --version print the module version and, in
// a git checkout, the revision the binary was built from.
func TestCLI_Version(t *testing.T) {
	want := "sessiondb "
	// Go stamps the revision when the module sits in a git clone (a .git
	// directory: not a worktree, whose .git is a file).
	if fi, err := os.Stat("../.git"); err == nil && fi.IsDir() {
		out, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatalf("git rev-parse HEAD: %v", err)
		}
		want = strings.TrimSpace(string(out))
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := cli(t, nil, "", args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "sessiondb ") || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "go1.") {
			t.Errorf("sessiondb %v: exit %d, stdout %q; want the version with %q", args, r.code, r.stdout, want)
		}
	}
	r := cli(t, nil, "", "version", "--json")
	var v struct {
		Module, Version, Revision string
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Module != "github.com/sessiondb/sessiondb/cmd/sessiondb" || v.Version == "" {
		t.Errorf("version --json: %v %q", err, r.stdout)
	}
}

// shell returns the path of a shell for the completion tests; missing, the
// test skips locally and fails in CI (scripts/test.sh installs them).
func shell(t *testing.T, name string) string {
	t.Helper()
	return needs.Program(t, name, name)
}

// TestCLI_Completion drives each shell's completion as the shell would,
// with the script the binary prints, and checks commands, subcommands,
// flags (after a global flag and its value) and literal values complete.
func TestCLI_Completion(t *testing.T) {
	dir := filepath.Dir(cliPath)
	pathEnv := "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")
	type probe struct{ line, want string }
	probes := []probe{
		{"sessiondb sess", "session sessions"},
		{"sessiondb --db x.db search --li", "--limit"},
		{"sessiondb session ", "end new show"},
		{"sessiondb session new --so", "--source"},
		{"sessiondb flag s1 un", "unarchive unhide unpin unread"},
		{"sessiondb completion f", "fish"},
		{"sessiondb messages s1 --newest", "--newest-first"},
		{"sessiondb help sea", "search"},
	}
	run := func(t *testing.T, sh string, args ...string) string {
		t.Helper()
		cmd := exec.Command(sh, args...)
		cmd.Env = []string{pathEnv, "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", sh, args, err, out)
		}
		return string(out)
	}
	check := func(t *testing.T, p probe, got string) {
		t.Helper()
		f := strings.Fields(got)
		if strings.Join(sortedCopy(f), " ") != p.want {
			t.Errorf("completing %q: got %q, want %q", p.line, strings.Join(f, " "), p.want)
		}
	}
	t.Run("Bash", func(t *testing.T) {
		bash := shell(t, "bash")
		for _, p := range probes {
			words := strings.Fields(p.line)
			if strings.HasSuffix(p.line, " ") {
				words = append(words, "")
			}
			script := `source <(sessiondb completion bash) || exit 1
COMP_WORDS=(` + shellWords(words) + `); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _sessiondb; printf '%s\n' "${COMPREPLY[@]}"`
			check(t, p, run(t, bash, "-c", script))
		}
	})
	t.Run("Zsh", func(t *testing.T) {
		zsh := shell(t, "zsh")
		for _, p := range probes {
			words := strings.Fields(p.line)
			if strings.HasSuffix(p.line, " ") {
				words = append(words, "")
			}
			// compadd and _describe stand in for the completion system:
			// they print what would be offered, filtered by the typed prefix.
			script := `compdef() { :; }
offer() { local w; for w in "$@"; do [[ $w == ${words[CURRENT]}* ]] && print -r -- "$w"; done; }
compadd() { [[ $1 == -- ]] && shift; offer "$@"; }
_describe() { local -a c; c=(${(P)2}); offer ${c%%:*}; }
_files() { :; }
source <(sessiondb completion zsh) || exit 1
words=(` + shellWords(words) + `); CURRENT=${#words}; _sessiondb; true`
			check(t, p, run(t, zsh, "-f", "-c", script))
		}
	})
	t.Run("Fish", func(t *testing.T) {
		fish := shell(t, "fish")
		for _, p := range probes {
			out := run(t, fish, "--no-config", "-c", "sessiondb completion fish | source; complete -C '"+p.line+"'")
			var names []string
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				name, _, _ := strings.Cut(l, "\t")
				names = append(names, name)
			}
			check(t, p, strings.Join(names, " "))
		}
	})
}

// shellWords quotes words for a bash or zsh array.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + w + "'"
	}
	return strings.Join(q, " ")
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
