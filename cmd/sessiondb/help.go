package main

// help.go answers `sessiondb help [COMMAND [SUB]]`, `COMMAND -h` and
// `COMMAND --help`. Everything it prints comes from the command table and
// from the commands' own flag sets: a flag is declared once, where the
// command parses it, and help, completion and the README follow.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// errHelpShown ends a command whose help was asked for (exit 0).
var errHelpShown = errors.New("help shown")

// errDescribed ends a command run only to collect its flag set.
var errDescribed = errors.New("flags described")

// globalUsage is the first line of the global help.
const globalUsage = "usage: sessiondb [--db PATH] [--json] [--write-patience D] [--transcript-patience D] [--open-patience D] COMMAND [ARGS]"

// variants splits a command's usage into its alternative forms, each a
// whole command line: "session new ... | show ID" gives "session new ..."
// and "session show ID". Only a " | " outside brackets separates forms
// ("(--content TEXT | --content-file F)" is one form).
func (c command) variants() []string {
	var out []string
	depth, start := 0, 0
	u := c.usage
	for i := 0; i < len(u); i++ {
		switch u[i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case '|':
			if depth == 0 && i > 0 && u[i-1] == ' ' && i+1 < len(u) && u[i+1] == ' ' {
				out = append(out, strings.TrimSpace(u[start:i]))
				start = i + 1
			}
		}
	}
	out = append(out, strings.TrimSpace(u[start:]))
	for i, v := range out {
		if !strings.HasPrefix(v, c.name+" ") && v != c.name {
			out[i] = c.name + " " + v
		}
	}
	return out
}

// subcommands returns the command's subcommand names (session: new, show,
// end), or nil when its usage has a single form.
func (c command) subcommands() []string {
	vs := c.variants()
	if len(vs) < 2 {
		return nil
	}
	var subs []string
	for _, v := range vs {
		if f := strings.Fields(v); len(f) > 1 && isWord(f[1]) {
			subs = append(subs, f[1])
		}
	}
	return subs
}

// values returns the literal words a command takes as a positional
// argument, from a "a|b|c" alternative in its usage (flag: archive, pin…).
func (c command) values() []string {
	var out []string
	for _, f := range strings.Fields(c.usage) {
		if !strings.Contains(f, "|") || strings.ContainsAny(f, "[]()-") {
			continue
		}
		words := strings.Split(f, "|")
		if slices.IndexFunc(words, func(w string) bool { return !isWord(w) }) < 0 {
			out = append(out, words...)
		}
	}
	return out
}

// isWord reports whether s is a literal lower-case word (a subcommand or
// value), not a placeholder (ID, FILE) or a flag.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '-' {
			return false
		}
	}
	return s[0] != '-'
}

// lookup finds a command by name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// describe returns the flag set of a command (or of one of its
// subcommands) without running it: the command is called in describe
// mode, where its first parseArgs hands the flag set back.
func describe(c command, sub string) (*flag.FlagSet, error) {
	e := &env{describe: true, stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	var args []string
	if sub != "" {
		args = []string{sub}
	}
	err := c.run(context.Background(), e, args)
	if !errors.Is(err, errDescribed) || e.described == nil {
		return nil, fmt.Errorf("command %q does not parse its flags with parseArgs before anything else: %v", strings.TrimSpace(c.name+" "+sub), err)
	}
	return e.described, nil
}

// globalFlags returns the global flags (a flag set holding only them).
func globalFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("sessiondb", flag.ContinueOnError)
	(&env{}).addGlobalFlags(fs)
	return fs
}

// runHelp prints the global help, or one command's.
func runHelp(_ context.Context, e *env, args []string) error {
	args, err := e.parseArgs(flag.NewFlagSet("help", flag.ContinueOnError), args, 0, 2)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		printUsage(e.stdout)
		return nil
	}
	c, ok := lookup(args[0])
	if !ok {
		return unknownCommand(args[0])
	}
	sub := ""
	if len(args) > 1 {
		sub = args[1]
		if !slices.Contains(c.subcommands(), sub) {
			return usagef("help: %s has no subcommand %q (%s)", c.name, sub, strings.Join(c.subcommands(), ", "))
		}
	}
	return printCommandHelp(e.stdout, c, sub)
}

// printCommandHelp prints a command's usage, summary, flags with their
// defaults, and the global flags. A command with subcommands and none
// chosen lists its forms instead of flags.
func printCommandHelp(w io.Writer, c command, sub string) error {
	forms := c.variants()
	if sub != "" {
		forms = slices.DeleteFunc(slices.Clone(forms), func(v string) bool {
			return !strings.HasPrefix(v+" ", c.name+" "+sub+" ")
		})
	}
	for i, f := range forms {
		lead := "usage: "
		if i > 0 {
			lead = "   or: "
		}
		fmt.Fprintf(w, "%ssessiondb %s\n", lead, f)
	}
	fmt.Fprintf(w, "\n%s.\n", upperFirst(c.summary))
	if subs := c.subcommands(); len(subs) > 0 && sub == "" {
		fmt.Fprintf(w, "\nRun `sessiondb help %s SUBCOMMAND` (%s) for its flags.\n", c.name, strings.Join(subs, ", "))
		return nil
	}
	fs, err := describe(c, sub)
	if err != nil {
		return err
	}
	var own []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { own = append(own, f) })
	if len(own) > 0 {
		fmt.Fprintln(w, "\nflags:")
		printFlags(w, own)
	}
	var global []*flag.Flag
	globalFlags().VisitAll(func(f *flag.Flag) { global = append(global, f) })
	fmt.Fprintln(w, "\nglobal flags (before or after the command):")
	printFlags(w, global)
	return nil
}

// printFlags prints flags as "--name VALUE  usage (default: X)".
func printFlags(w io.Writer, flags []*flag.Flag) {
	type row struct{ head, text string }
	rows := make([]row, len(flags))
	width := 0
	for i, f := range flags {
		head, text := dashed(f.Name), flagUsage(f)
		if v := valueName(f); v != "" {
			head += " " + v
		}
		if !strings.Contains(text, "(default") {
			text += " (default: " + defaultText(f) + ")"
		}
		rows[i] = row{head, text}
		width = max(width, len(head))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %s\n", width, r.head, r.text)
	}
}

// valueName is the placeholder of a flag's value: its `name` in the usage
// text, N for numbers, D for durations, else the flag's name in capitals;
// "" for a boolean flag.
func valueName(f *flag.Flag) string {
	if !takesValue(f) {
		return ""
	}
	name, _ := flag.UnquoteUsage(f)
	switch name {
	case "int", "uint", "float":
		return "N"
	case "duration":
		return "D"
	case "string", "value", "":
		return strings.ToUpper(f.Name)
	}
	return strings.ToUpper(name)
}

// flagUsage is a flag's help text without the backquotes.
func flagUsage(f *flag.Flag) string {
	_, text := flag.UnquoteUsage(f)
	return text
}

func defaultText(f *flag.Flag) string {
	switch d := f.DefValue; {
	case d == "" || d == "[]":
		return "none"
	case strings.ContainsAny(d, " ,") || (takesValue(f) && valueName(f) != "N" && valueName(f) != "D"):
		return fmt.Sprintf("%q", d)
	default:
		return d
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// printUsage prints the global help: every command's summary and forms.
// docs/CLI.md's CLI block is this text (TestREADMEMatchesHelp).
func printUsage(w io.Writer) {
	fmt.Fprintln(w, globalUsage)
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
		for _, v := range c.variants() {
			if v != c.name {
				fmt.Fprintf(w, "  %-12s   %s\n", "", v)
			}
		}
	}
	fmt.Fprintln(w, "\n`sessiondb help COMMAND` (or COMMAND --help) shows a command's flags and their defaults.")
	fmt.Fprintln(w, "The database is --db (a file path, or a postgres:// URL for PostgreSQL), else $SESSIONDB_PATH, else $XDG_STATE_HOME/sessiondb/state.db, else ~/.local/state/sessiondb/state.db.")
	fmt.Fprintln(w, "Patience (Go durations): flags, else $SESSIONDB_WRITE_PATIENCE, $SESSIONDB_TRANSCRIPT_PATIENCE, $SESSIONDB_OPEN_PATIENCE.")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 not a sessiondb store (the wrong path; nothing changed), 75 write lock held past patience or a live lease in the way.")
}

// unknownCommand is the error for a command name not in the table, with
// the nearest names as a suggestion.
func unknownCommand(name string) error {
	var near []string
	best := 3 // suggest names at most 2 edits away, or that name starts
	for _, c := range commands() {
		d := editDistance(name, c.name)
		if len(name) >= 3 && strings.HasPrefix(c.name, name) {
			d = 1
		}
		switch {
		case d < best:
			best, near = d, []string{c.name}
		case d == best:
			near = append(near, c.name)
		}
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if len(near) > 0 {
		msg += " (did you mean " + strings.Join(near, " or ") + "?)"
	}
	return usagef("%s; `sessiondb help` lists the commands", msg)
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (command names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
