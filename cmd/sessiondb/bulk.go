package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

// runBulk is `bulk prune|archive|auto-archive|delete|ghosts`: operations
// on many sessions at once, each with --dry-run to list what would be done
// first.
func runBulk(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("bulk: expected prune, archive, auto-archive, delete or ghosts")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("bulk "+sub, flag.ContinueOnError)
	var f db.BulkFilter
	var o db.BulkOptions
	age := fs.String("older-than", "", "only sessions whose last sign of life is older than `AGE` (90d, 36h)")
	idList := fs.String("ids", "", "only these sessions (comma-separated `IDS`)")
	fs.StringVar(&f.Source, "source", "", "only sessions from this `SOURCE`")
	fs.BoolVar(&f.EndedOnly, "ended", false, "only ended sessions")
	fs.BoolVar(&f.EmptyOnly, "empty", false, "only sessions without a single message")
	fs.BoolVar(&f.ArchivedOnly, "archived", false, "only archived sessions")
	fs.BoolVar(&f.ExcludeArchived, "no-archived", false, "leave archived sessions out")
	fs.BoolVar(&f.IncludeLive, "include-live", false, "prune: also sessions that never ended (idle for --older-than); without it prune takes ended sessions only")
	m := &f.Sessions
	fs.StringVar(&m.Model, "model", "", "only sessions of this `MODEL`")
	fs.StringVar(&m.Provider, "provider", "", "only sessions billed through this `PROVIDER`")
	fs.StringVar(&m.TitleContains, "title-contains", "", "only sessions whose title contains `TEXT` (taken literally)")
	fs.StringVar(&m.EndReason, "end-reason", "", "only sessions ended for this `REASON`")
	fs.StringVar(&m.Cwd, "cwd", "", "only sessions in this working `DIR`")
	fs.StringVar(&m.UserID, "user", "", "only sessions of this `USER`")
	fs.StringVar(&m.ChatID, "chat", "", "only sessions of this `CHAT` id")
	after := fs.String("started-after", "", "only sessions started after `DATE` (2006-01-02 or RFC 3339)")
	before := fs.String("started-before", "", "only sessions started before `DATE` (2006-01-02 or RFC 3339)")
	fs.Int64Var(&m.MinMessages, "min-messages", 0, "only sessions with at least `N` live messages")
	fs.Int64Var(&m.MaxMessages, "max-messages", 0, "only sessions with at most `N` live messages")
	fs.Int64Var(&m.MinToolCalls, "min-tool-calls", 0, "only sessions with at least `N` tool calls")
	fs.Int64Var(&m.MaxToolCalls, "max-tool-calls", 0, "only sessions with at most `N` tool calls")
	fs.Int64Var(&m.MinTokens, "min-tokens", 0, "only sessions with at least `N` input+output tokens")
	fs.Int64Var(&m.MaxTokens, "max-tokens", 0, "only sessions with at most `N` input+output tokens")
	fs.Float64Var(&m.MinCostUSD, "min-cost", 0, "only sessions that cost at least `USD`")
	fs.Float64Var(&m.MaxCostUSD, "max-cost", 0, "only sessions that cost at most `USD`")
	fs.BoolVar(&o.DryRun, "dry-run", false, "list what would be done; change nothing")
	fs.IntVar(&o.BatchSize, "batch", 0, "sessions weighed per transaction (default 100)")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if *age != "" {
		d, err := parseAge(*age)
		if err != nil {
			return err
		}
		f.OlderThan = d
	}
	for _, d := range []struct {
		flag, v string
		dst     *time.Time
	}{{"--started-after", *after, &m.StartedAfter}, {"--started-before", *before, &m.StartedBefore}} {
		if d.v == "" {
			continue
		}
		at, err := parseDate(d.v)
		if err != nil {
			return usagef("bulk %s: %s %q: want 2006-01-02 or an RFC 3339 time", sub, d.flag, d.v)
		}
		*d.dst = at
	}
	if *idList != "" {
		for _, id := range strings.Split(*idList, ",") {
			if id = strings.TrimSpace(id); id != "" {
				f.IDs = append(f.IDs, id)
			}
		}
	}
	if f.IncludeLive && sub != "prune" {
		return usagef("bulk %s: --include-live is prune's (delete and archive take live sessions unless --ended)", sub)
	}
	var verb string
	var op func(context.Context, *store.Store) (db.BulkResult, error)
	switch sub {
	case "prune":
		if f.EndedOnly && f.IncludeLive {
			return usagef("bulk prune: --ended and --include-live contradict each other")
		}
		if f.OlderThan == 0 {
			f.OlderThan = 90 * 24 * time.Hour
		}
		verb, op = "delete", func(ctx context.Context, s *store.Store) (db.BulkResult, error) { return s.PruneSessions(ctx, f, o) }
	case "delete":
		verb, op = "delete", func(ctx context.Context, s *store.Store) (db.BulkResult, error) { return s.DeleteSessions(ctx, f, o) }
	case "archive":
		verb, op = "archive", func(ctx context.Context, s *store.Store) (db.BulkResult, error) { return s.ArchiveSessions(ctx, f, o) }
	case "auto-archive":
		// The idle sweep: new activity takes its archive back.
		if f.OlderThan == 0 {
			return usagef("bulk auto-archive: --older-than is required (how long a conversation must be idle)")
		}
		verb, op = "archive", func(ctx context.Context, s *store.Store) (db.BulkResult, error) {
			return s.AutoArchiveSessions(ctx, f, o)
		}
	case "ghosts":
		if f.IDs != nil || f.Source != "" || f.EndedOnly || f.ArchivedOnly || f.IncludeLive || f.Sessions != (db.SessionMatch{}) {
			return usagef("bulk ghosts: only --older-than (default 24h), --dry-run and --batch apply")
		}
		verb, op = "delete", func(ctx context.Context, s *store.Store) (db.BulkResult, error) {
			return s.DeleteGhostSessions(ctx, f.OlderThan, o)
		}
	default:
		return usagef("bulk: unknown operation %q (expected prune, archive, auto-archive, delete or ghosts)", sub)
	}
	s, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	res, err := op(ctx, s)
	if e.json {
		spared := make([]map[string]string, len(res.Spared))
		for i, x := range res.Spared {
			spared[i] = map[string]string{"id": x.ID, "reason": string(x.Reason)}
		}
		if jerr := writeJSON(e.stdout, map[string]any{"dry_run": res.DryRun, "matched": res.Matched,
			"done": res.Done(), "ids": res.IDs, "already": res.Already, "spared": spared,
			"orphaned": res.Orphaned, "batches": res.Batches}); jerr != nil {
			return jerr
		}
		return err
	}
	if err != nil {
		printBulk(e.stdout, verb, res) // what the committed batches did
		return err
	}
	return printBulk(e.stdout, verb, res)
}

// printBulk lists the sessions (would) done and spared, then the counts.
func printBulk(w io.Writer, verb string, r db.BulkResult) error {
	done := verb + "d"
	if r.DryRun {
		done = "would " + verb
	}
	for _, id := range r.IDs {
		fmt.Fprintf(w, "%s %s\n", done, id)
	}
	for _, x := range r.Spared {
		fmt.Fprintf(w, "spared %s (%s)\n", x.ID, x.Reason)
	}
	_, err := fmt.Fprintf(w, "%s %d sessions for %d selected (a conversation goes whole); spared %d; already done %d; %d children unlinked; %d batches\n",
		done, r.Done(), r.Matched, len(r.Spared), r.Already, r.Orphaned, r.Batches)
	return err
}

// parseDate reads a day (2006-01-02, local midnight) or an RFC 3339 time.
func parseDate(s string) (time.Time, error) {
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}
