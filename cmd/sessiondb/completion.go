package main

// completion.go writes shell completion scripts from the command table and
// the commands' flag sets, so a new command or flag completes without
// touching this file.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// completionEntry is what completes after one command (and subcommand).
type completionEntry struct {
	cmd, sub string
	summary  string
	flags    []*flag.Flag // the command's own, not the global ones
	values   []string     // literal positional words (flag: archive, pin…)
	subs     []string     // subcommands, for the command's own entry
}

// completionSpec lists every command and subcommand with its flags.
func completionSpec() ([]completionEntry, error) {
	var out []completionEntry
	for _, c := range commands() {
		subs := c.subcommands()
		if len(subs) > 0 {
			out = append(out, completionEntry{cmd: c.name, summary: c.summary, subs: subs})
		}
		for _, sub := range append([]string{""}, subs...)[min(len(subs), 1):] {
			fs, err := describe(c, sub)
			if err != nil {
				return nil, err
			}
			en := completionEntry{cmd: c.name, sub: sub, summary: c.summary, values: c.values()}
			if c.name == "help" {
				en.values = commandNames()
			}
			fs.VisitAll(func(f *flag.Flag) { en.flags = append(en.flags, f) })
			out = append(out, en)
		}
	}
	return out, nil
}

// takesValue reports whether a flag needs an argument (--limit N, not --yes).
func takesValue(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

func flagNames(flags []*flag.Flag) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = dashed(f.Name)
	}
	return out
}

// dashed spells a flag as it is written: -o, --limit.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// valueFlags lists every flag, global or not, that takes an argument: the
// scripts skip its value when looking for the command word.
func valueFlags(spec []completionEntry, global []*flag.Flag) []string {
	var out []string
	add := func(fs []*flag.Flag) {
		for _, f := range fs {
			if takesValue(f) && !slices.Contains(out, "-"+f.Name) {
				out = append(out, "-"+f.Name)
				if len(f.Name) > 1 {
					out = append(out, "--"+f.Name)
				}
			}
		}
	}
	add(global)
	for _, en := range spec {
		add(en.flags)
	}
	return out
}

func runCompletion(_ context.Context, e *env, args []string) error {
	pos, err := e.parseArgs(flag.NewFlagSet("completion", flag.ContinueOnError), args, 1, 1)
	if err != nil {
		return err
	}
	spec, err := completionSpec()
	if err != nil {
		return err
	}
	var global []*flag.Flag
	globalFlags().VisitAll(func(f *flag.Flag) { global = append(global, f) })
	switch pos[0] {
	case "bash":
		return writeBash(e.stdout, spec, global)
	case "zsh":
		return writeZsh(e.stdout, spec, global)
	case "fish":
		return writeFish(e.stdout, spec, global)
	}
	return usagef("completion: unknown shell %q (bash, zsh or fish)", pos[0])
}

// words returns what completes after cmd sub: flags when the word being
// typed starts with "-", else subcommands or literal values.
func (en completionEntry) words(global []*flag.Flag) (flags, others []string) {
	if len(en.subs) > 0 {
		return flagNames(global), en.subs
	}
	return append(flagNames(en.flags), flagNames(global)...), en.values
}

func commandNames() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	return out
}

// writeBash writes a bash completion function: it finds the command and
// subcommand words (skipping flags and their values), then offers that
// command's flags, subcommands or values, and files otherwise.
func writeBash(w io.Writer, spec []completionEntry, global []*flag.Flag) error {
	fmt.Fprintf(w, `# bash completion for sessiondb: source <(sessiondb completion bash)
_sessiondb() {
  local cur=${COMP_WORDS[COMP_CWORD]} cmd= sub= i w flags= others=
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      %s) ((i++)); continue ;;
      -*) continue ;;
    esac
    if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w; fi
  done
  case "$cmd" in
    "") flags=%q; others=%q ;;
`, strings.Join(valueFlags(spec, global), "|"), strings.Join(flagNames(global), " "), strings.Join(commandNames(), " "))
	for _, en := range spec {
		if en.sub != "" {
			continue
		}
		fl, ot := en.words(global)
		fmt.Fprintf(w, "    %s) flags=%q; others=%q ;;\n", en.cmd, strings.Join(fl, " "), strings.Join(ot, " "))
	}
	fmt.Fprint(w, "  esac\n  case \"$cmd $sub\" in\n")
	for _, en := range spec {
		if en.sub == "" {
			continue
		}
		fl, ot := en.words(global)
		fmt.Fprintf(w, "    %q) flags=%q; others=%q ;;\n", en.cmd+" "+en.sub, strings.Join(fl, " "), strings.Join(ot, " "))
	}
	_, err := fmt.Fprint(w, `  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$others" -- "$cur"))
  fi
}
complete -o default -F _sessiondb sessiondb
`)
	return err
}

// writeZsh writes a zsh completion function in the same shape as bash's,
// with compadd (descriptions for the commands).
func writeZsh(w io.Writer, spec []completionEntry, global []*flag.Flag) error {
	fmt.Fprintf(w, `#compdef sessiondb
# zsh completion for sessiondb: source <(sessiondb completion zsh)
_sessiondb() {
  local cmd= sub= i w
  local -a flags others
  for ((i = 2; i < CURRENT; i++)); do
    w=${words[i]}
    case $w in
      (%s) ((i++)); continue ;;
      (-*) continue ;;
    esac
    if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w; fi
  done
  if [[ -z $cmd && ${words[CURRENT]} != -* ]]; then
    local -a cmds
    cmds=(
`, strings.Join(valueFlags(spec, global), "|"))
	for _, c := range commands() {
		fmt.Fprintf(w, "      %s\n", zshQuote(c.name+":"+c.summary))
	}
	fmt.Fprintf(w, "    )\n    _describe command cmds\n    return\n  fi\n  case \"$cmd\" in\n    (\"\") flags=(%s) ;;\n", strings.Join(flagNames(global), " "))
	for _, en := range spec {
		if en.sub != "" {
			continue
		}
		fl, ot := en.words(global)
		fmt.Fprintf(w, "    (%s) flags=(%s); others=(%s) ;;\n", en.cmd, strings.Join(fl, " "), strings.Join(ot, " "))
	}
	fmt.Fprint(w, "  esac\n  case \"$cmd $sub\" in\n")
	for _, en := range spec {
		if en.sub == "" {
			continue
		}
		fl, ot := en.words(global)
		fmt.Fprintf(w, "    (%s) flags=(%s); others=(%s) ;;\n", zshQuote(en.cmd+" "+en.sub), strings.Join(fl, " "), strings.Join(ot, " "))
	}
	_, err := fmt.Fprint(w, `  esac
  if [[ ${words[CURRENT]} == -* ]]; then
    compadd -- $flags
  elif (( ${#others} )); then
    compadd -- $others
  else
    _files
  fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _sessiondb "$@"
else
  compdef _sessiondb sessiondb
fi
`)
	return err
}

func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeFish writes fish `complete` lines: commands, then each command's
// subcommands, flags (with their help) and values.
func writeFish(w io.Writer, spec []completionEntry, global []*flag.Flag) error {
	fmt.Fprintln(w, "# fish completion for sessiondb: sessiondb completion fish | source")
	fmt.Fprintln(w, "complete -c sessiondb -f")
	flagLine := func(cond string, f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		req := ""
		if takesValue(f) {
			req = " -r"
		}
		fmt.Fprintf(w, "complete -c sessiondb -n %s -l %s%s -d %s\n", zshQuote(cond), f.Name, req, zshQuote(usage))
	}
	for _, f := range global {
		flagLine("true", f)
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "complete -c sessiondb -n '__fish_use_subcommand' -a %s -d %s\n", c.name, zshQuote(c.summary))
	}
	for _, en := range spec {
		cond := "__fish_seen_subcommand_from " + en.cmd
		if len(en.subs) > 0 {
			fmt.Fprintf(w, "complete -c sessiondb -n %s -a %s\n",
				zshQuote(cond+"; and not __fish_seen_subcommand_from "+strings.Join(en.subs, " ")), zshQuote(strings.Join(en.subs, " ")))
			continue
		}
		if en.sub != "" {
			cond += "; and __fish_seen_subcommand_from " + en.sub
		}
		for _, f := range en.flags {
			flagLine(cond, f)
		}
		if len(en.values) > 0 {
			fmt.Fprintf(w, "complete -c sessiondb -n %s -a %s\n", zshQuote(cond), zshQuote(strings.Join(en.values, " ")))
		}
	}
	return nil
}
