package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/sessiondb/sessiondb/db"
)

// runCopy is `copy --from SRC --to DST`: every session of one store, with
// its messages, usage and lineage, into another, on any pair of engines
// (the way off a SQLite file that one machine no longer carries, and back).
// It is the domain's Export piped into its Import, so memory stays
// constant whatever the store's size, and a re-run brings the destination
// up to date without duplicating anything: Import tops up a session the
// destination already holds when its rows there are a beginning of the
// source's (appending only the messages added since), and skips it whole
// otherwise, saying why (see db.ImportOptions).
func runCopy(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	from := fs.String("from", "", "the store to read: a file `path` or a postgres:// URL (required)")
	to := fs.String("to", "", "the store to write, created when missing: a file `path` or a postgres:// URL (required)")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	switch {
	case *from == "" || *to == "":
		return usagef("copy: --from and --to are both required")
	case *from == *to:
		return usagef("copy: --from and --to name the same store")
	}
	opts, err := e.options()
	if err != nil {
		return err
	}
	src, err := openLocation(ctx, *from, opts, false, true)
	if err != nil {
		return fmt.Errorf("copy --from: %w", err)
	}
	defer closeOpened(e, src)
	dst, err := openLocation(ctx, *to, opts, true, false)
	if err != nil {
		return fmt.Errorf("copy --to: %w", err)
	}
	defer closeOpened(e, dst)

	total := src.sessionCount(ctx)
	pr, pw := io.Pipe()
	exported := make(chan error, 1)
	go func() {
		// Reading the source is the first pass: Import checks its whole
		// input before it writes anything.
		bar := e.bar(total, "copy: read")
		_, err := src.store.Export(ctx, pw, db.ExportOptions{OnProgress: func(sessions, _ int64) { bar.Set64(sessions) }})
		bar.Finish()
		pw.CloseWithError(err)
		exported <- err
	}()
	bar := e.bar(-1, "copy: write")
	res, err := dst.store.Import(ctx, pr, db.ImportOptions{OnProgress: func(done, total int64) {
		bar.ChangeMax64(total)
		bar.Set64(done)
	}})
	bar.Finish()
	pr.CloseWithError(fmt.Errorf("copy: the import stopped reading")) // unblocks an export the import gave up on
	if xerr := <-exported; xerr != nil {
		return fmt.Errorf("copy: read %s: %w", src.where, xerr)
	}
	for _, x := range res.Errors {
		fmt.Fprintln(e.stderr, "sessiondb: copy:", x)
	}
	for _, x := range res.Skips {
		fmt.Fprintf(e.stderr, "sessiondb: copy: skipped %s, which differs at the destination: %s\n", x.SessionID, x.Reason)
	}
	if err != nil {
		return fmt.Errorf("copy: write %s: %w", dst.where, err)
	}
	if e.json {
		return writeJSON(e.stdout, map[string]any{"from": src.where, "to": dst.where, "copied": res.Imported,
			"topped_up": res.ToppedUp, "skipped": res.Skipped, "detached": res.Detached, "untitled": res.Untitled, "messages": res.Messages})
	}
	_, err = fmt.Fprintf(e.stdout, "copied %s (%s) from %s to %s%s\n",
		plural(int64(res.Imported), "session"), plural(res.Messages, "message"), src.where, dst.where, importTail(res, "there"))
	return err
}

// closeOpened closes a store a command opened besides the env's own.
func closeOpened(e *env, o opened) {
	if err := o.close(); err != nil {
		fmt.Fprintln(e.stderr, "sessiondb: close:", err)
	}
}
