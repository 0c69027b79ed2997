package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/sessiondb/sessiondb/hermes"
)

// runImportFrom is `import`: --from picks the format of the file — an
// export of sessiondb's own (the default) or another store's database.
func runImportFrom(ctx context.Context, e *env, args []string) error {
	from, rest, err := takeFrom(args)
	if err != nil {
		return err
	}
	switch from {
	case "", "sessiondb":
		return runImport(ctx, e, rest)
	case "hermes":
		return runImportHermes(ctx, e, rest)
	}
	return usagef("import: --from %q: expected sessiondb or hermes", from)
}

// takeFrom removes --from X (or --from=X) from args, so each importer
// parses only its own flags.
func takeFrom(args []string) (from string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return from, append(rest, args[i:]...), nil
		case a == "--from" || a == "-from":
			if i+1 >= len(args) {
				return "", nil, usagef("import: --from needs a value (sessiondb or hermes)")
			}
			from = args[i+1]
			i++
		case strings.HasPrefix(a, "--from=") || strings.HasPrefix(a, "-from="):
			_, from, _ = strings.Cut(a, "=")
		default:
			rest = append(rest, a)
		}
	}
	return from, rest, nil
}

// runImportHermes is `import --from hermes STATE_DB`: the file is read
// read-only (a Hermes process may go on using it), and running it again
// imports only what is new. The store may be either engine: a SQLite file
// or a PostgreSQL URL.
func runImportHermes(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("import --from hermes", flag.ContinueOnError)
	batch := fs.Int("batch", 0, "source messages per transaction (default 1000)")
	pos, err := e.parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	bar := e.bar(-1, "import hermes")
	res, err := hermes.Import(ctx, s, pos[0], hermes.Options{BatchMessages: *batch,
		OnProgress: func(done, total int64) {
			bar.ChangeMax64(total)
			bar.Set64(done)
		}})
	bar.Finish()
	if e.json {
		if jerr := writeJSON(e.stdout, hermesResultJSON(res)); jerr != nil {
			return jerr
		}
		return err
	}
	if err != nil {
		return err
	}
	return printHermesResult(e.stdout, res)
}

func hermesResultJSON(r hermes.Result) map[string]any {
	return map[string]any{"source": r.Source, "imported": r.Imported, "updated": r.Updated,
		"unchanged": r.Unchanged, "skipped": r.Skipped, "refused": r.Refused, "messages": r.Messages,
		"restated": r.Restated, "usage_rows": r.Usage, "meta": r.Meta, "detached": r.Detached,
		"untitled": r.Untitled, "not_representable": r.NotRepresentable,
		"refused_messages": r.RefusedMessages, "nothing_new": r.NothingNew()}
}

// printHermesResult is the summary: what was imported, what was skipped,
// and what sessiondb could not represent, each counted.
func printHermesResult(w io.Writer, r hermes.Result) error {
	if r.NothingNew() {
		fmt.Fprintf(w, "nothing new in %s: %d sessions already imported and unchanged", r.Source, r.Unchanged)
		if r.Skipped > 0 {
			fmt.Fprintf(w, ", %d skipped (ids the store uses for its own sessions)", r.Skipped)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "imported from %s: %d new sessions, %d updated, %d unchanged; %d messages, %d message states changed, %d usage rows, %d meta keys\n",
			r.Source, r.Imported, r.Updated, r.Unchanged, r.Messages, r.Restated, r.Usage, r.Meta)
		if r.Skipped > 0 {
			fmt.Fprintf(w, "skipped %d sessions whose ids the store uses for its own\n", r.Skipped)
		}
		if r.Detached > 0 {
			fmt.Fprintf(w, "%s without its parent link\n", plural(int64(r.Detached), "session"))
		}
		if r.Untitled > 0 {
			fmt.Fprintf(w, "%s without its title (taken by another session)\n", plural(int64(r.Untitled), "session"))
		}
	}
	if r.Refused > 0 {
		fmt.Fprintf(w, "refused %d sessions sessiondb cannot hold\n", r.Refused)
	}
	printTally(w, "messages not imported", r.RefusedMessages)
	printTally(w, "not representable in sessiondb (counted, not imported)", r.NotRepresentable)
	return nil
}

func printTally(w io.Writer, title string, t map[string]int64) {
	if len(t) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, k := range slices.Sorted(maps.Keys(t)) {
		fmt.Fprintf(w, "  %-60s %d\n", k, t[k])
	}
}
