package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite docs/CLI.md's CLI block from the help text")

// readmeCLIBlock returns docs/CLI.md, and the start and end of the code
// block under "## The CLI".
func readmeCLIBlock(t *testing.T) (readme string, start, end int) {
	t.Helper()
	b, err := os.ReadFile("../../docs/CLI.md")
	if err != nil {
		t.Fatal(err)
	}
	readme = string(b)
	head := strings.Index(readme, "## The CLI\n")
	if head < 0 {
		t.Fatal(`docs/CLI.md has no "## The CLI" section`)
	}
	open := strings.Index(readme[head:], "```\n")
	if open < 0 {
		t.Fatal("docs/CLI.md: no code block under ## The CLI")
	}
	start = head + open + len("```\n")
	end = start + strings.Index(readme[start:], "```\n")
	if end < start {
		t.Fatal("docs/CLI.md: the CLI code block is not closed")
	}
	return readme, start, end
}

// TestREADMEMatchesHelp: docs/CLI.md's command list is the global help,
// byte for byte. After changing a command, run
// `go -C cmd/sessiondb test . -run TestREADMEMatchesHelp -update`.
func TestREADMEMatchesHelp(t *testing.T) {
	var help bytes.Buffer
	printUsage(&help)
	readme, start, end := readmeCLIBlock(t)
	if *update {
		if err := os.WriteFile("../../docs/CLI.md", []byte(readme[:start]+help.String()+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(help.String(), readme[start:end]); diff != "" {
		t.Errorf("docs/CLI.md's CLI block differs from `sessiondb help` (-help +docs/CLI.md); run with -update to rewrite it:\n%s", diff)
	}
}

// TestEveryCommandDescribesItsFlags: help and completion read each
// command's flag set by running it in describe mode, which works only if
// the command parses its flags (e.parseArgs) before doing anything else.
func TestEveryCommandDescribesItsFlags(t *testing.T) {
	for _, c := range commands() {
		subs := c.subcommands()
		if len(subs) == 0 {
			subs = []string{""}
		}
		for _, sub := range subs {
			if _, err := describe(c, sub); err != nil {
				t.Error(err)
			}
		}
	}
}

func TestVariantsAndSubcommands(t *testing.T) {
	tests := []struct {
		usage          string
		variants, subs []string
		values         []string
	}{
		{"session new [--id ID] | show ID | end ID --reason R",
			[]string{"session new [--id ID]", "session show ID", "session end ID --reason R"}, []string{"new", "show", "end"}, nil},
		{"meta get KEY | meta set KEY VALUE", []string{"meta get KEY", "meta set KEY VALUE"}, []string{"get", "set"}, nil},
		{"append ID (--content TEXT | --content-file F|-) [--key K]", []string{"append ID (--content TEXT | --content-file F|-) [--key K]"}, nil, nil},
		{"flag SESSION_ID archive|unarchive|pin", []string{"flag SESSION_ID archive|unarchive|pin"}, nil, []string{"archive", "unarchive", "pin"}},
		{"search QUERY [--sort relevance|newest|oldest]", []string{"search QUERY [--sort relevance|newest|oldest]"}, nil, nil},
	}
	for _, tt := range tests {
		name, _, _ := strings.Cut(tt.usage, " ")
		c := command{name: name, usage: tt.usage}
		if diff := cmp.Diff(tt.variants, c.variants()); diff != "" {
			t.Errorf("variants(%q) (-want +got):\n%s", tt.usage, diff)
		}
		if diff := cmp.Diff(tt.subs, c.subcommands()); diff != "" {
			t.Errorf("subcommands(%q) (-want +got):\n%s", tt.usage, diff)
		}
		if diff := cmp.Diff(tt.values, c.values()); diff != "" {
			t.Errorf("values(%q) (-want +got):\n%s", tt.usage, diff)
		}
	}
}

func TestUnknownCommandSuggests(t *testing.T) {
	tests := []struct{ typed, want string }{
		{"serch", "did you mean search?"},
		{"sesions", "did you mean sessions?"},
		{"vacum", "did you mean vacuum?"},
		{"lin", "did you mean lineage?"},
		{"frobnicate", ""},
	}
	for _, tt := range tests {
		msg := unknownCommand(tt.typed).Error()
		if tt.want == "" && strings.Contains(msg, "did you mean") || !strings.Contains(msg, tt.want) {
			t.Errorf("unknownCommand(%q) = %q, want it to say %q", tt.typed, msg, tt.want)
		}
	}
}
