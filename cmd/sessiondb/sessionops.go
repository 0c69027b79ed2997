package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// runTitle shows a session's title, or sets it (a user's title; an empty
// TITLE clears it).
func runTitle(ctx context.Context, e *env, args []string) error {
	pos, err := e.parseArgs(flag.NewFlagSet("title", flag.ContinueOnError), args, 1, 2)
	if err != nil {
		return err
	}
	s, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	if len(pos) == 2 {
		if err := s.SetTitle(ctx, pos[0], pos[1]); err != nil {
			return err
		}
	}
	sess, err := s.Session(ctx, pos[0])
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, toTitleJSON(sess))
	}
	if sess.Title == "" {
		return nil // no title: no output, as with any empty value
	}
	_, err = fmt.Fprintln(e.stdout, sess.Title)
	return err
}

// runUsage prints one session's usage, or totals across the store.
func runUsage(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("usage", flag.ContinueOnError)
	var f db.UsageFilter
	fs.StringVar(&f.Source, "source", "", "store totals: only sessions from this source")
	since := fs.String("since", "", "store totals: only sessions started since `WHEN` (a duration ago, e.g. 24h, or an RFC 3339 time)")
	by := fs.String("by", "model", "store totals: break down by `model` (and task) or by billing provider")
	tree := fs.Bool("tree", false, "one session: its whole delegation tree (the session, its continuations and delegates, recursively, from its top)")
	pos, err := e.parseArgs(fs, args, 0, 1)
	if err != nil {
		return err
	}
	if *tree && len(pos) != 1 {
		return usagef("usage: --tree needs a SESSION_ID")
	}
	if len(pos) == 1 && (f.Source != "" || *since != "" || *by != "model") {
		return usagef("usage: --source, --since and --by shape store totals, not one session (whose rows name their provider in --json)")
	}
	if *by != "model" && *by != "provider" {
		return usagef("usage: --by %q: expected model or provider", *by)
	}
	if *since != "" {
		if f.Since, err = parseSince(*since, time.Now()); err != nil {
			return err
		}
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	if *by == "provider" {
		providers, err := s.UsageByProvider(ctx, f)
		if err != nil {
			return err
		}
		if e.json {
			return writeJSON(e.stdout, providerReportJSON{Providers: mapAll(providers, toProviderUsageJSON)})
		}
		return printProviderTable(e.stdout, providers)
	}
	var total db.Usage
	var models []db.ModelUsage
	report := usageReportJSON{}
	switch {
	case *tree:
		t, err := s.DelegationTreeUsage(ctx, pos[0])
		if err != nil {
			return err
		}
		aux := toUsageJSON(t.Auxiliary)
		report = usageReportJSON{SessionID: pos[0], RootSessionID: t.RootID, SessionIDs: t.SessionIDs,
			Total: toUsageJSON(t.Usage), Auxiliary: &aux, Models: mapAll(t.Models, toModelUsageJSON)}
		if e.json {
			return writeJSON(e.stdout, report)
		}
		if _, err := fmt.Fprintf(e.stdout, "delegation tree of %s: %d sessions (%s)\n", oneLine(t.RootID), len(t.SessionIDs),
			oneLine(strings.Join(t.SessionIDs, ", "))); err != nil {
			return err
		}
		return printUsageTable(e.stdout, t.Usage, t.Models, true, &t.Auxiliary)
	case len(pos) == 1:
		report.SessionID = pos[0]
		total, models, err = s.SessionUsage(ctx, pos[0])
	default:
		total, models, err = s.UsageTotals(ctx, f)
	}
	if err != nil {
		return err
	}
	if e.json {
		report.Total, report.Models = toUsageJSON(total), mapAll(models, toModelUsageJSON)
		return writeJSON(e.stdout, report)
	}
	if len(models) == 0 && total == (db.Usage{}) {
		// Not a row of zeros: say why there is nothing to show.
		_, err := fmt.Fprintln(e.stdout, "no usage recorded (agents record it with Store.RecordUsage; nothing here has)")
		return err
	}
	return printUsageTable(e.stdout, total, models, len(pos) == 1, nil)
}

// parseSince reads --since: a duration before now, or an RFC 3339 time.
func parseSince(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, v, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("usage: --since %q is neither a duration (24h) nor a time (2026-03-01 or RFC 3339)", v)
}

// printUsageTable prints one row per model and task — and per billing
// route when routes is set (one session's rows, a tree's) — then the
// main-loop totals (auxiliary tasks are not part of them) and, for a tree,
// the auxiliary tasks' sum.
func printUsageTable(w io.Writer, total db.Usage, models []db.ModelUsage, routes bool, aux *db.Usage) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "MODEL\tTASK\t"
	if routes {
		head += "ROUTE\t"
	}
	fmt.Fprintln(tw, head+"INPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tREASONING\tCALLS\tEST. USD\tACTUAL USD")
	row := func(model, task, route string, u db.Usage) {
		cols := oneLine(model) + "\t" + oneLine(task) + "\t"
		if routes {
			cols += oneLine(route) + "\t"
		}
		fmt.Fprintf(tw, "%s%d\t%d\t%d\t%d\t%d\t%d\t%.4f\t%.4f\n", cols, u.InputTokens, u.OutputTokens,
			u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.APICalls, u.EstimatedCostUSD, u.ActualCostUSD)
	}
	for _, m := range models {
		row(orDash(m.Model), orDash(m.Task), routeText(m.Billing), m.Usage)
	}
	row("total", "main loop", "", total)
	if aux != nil {
		row("total", "auxiliary", "", *aux)
	}
	return tw.Flush()
}

// routeText is a billing route in one cell: provider, mode and base URL
// as far as known, "-" for none.
func routeText(b db.Billing) string {
	var parts []string
	for _, p := range []string{b.Provider, b.Mode, b.BaseURL} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return orDash(strings.Join(parts, " "))
}

// printProviderTable prints one row per billing provider ("-": recorded
// without one), auxiliary tasks included.
func printProviderTable(w io.Writer, providers []db.ProviderUsage) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tREASONING\tCALLS\tEST. USD\tACTUAL USD")
	for _, p := range providers {
		u := p.Usage
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.4f\t%.4f\n", oneLine(orDash(p.Provider)), u.InputTokens, u.OutputTokens,
			u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.APICalls, u.EstimatedCostUSD, u.ActualCostUSD)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runHandoff shows a session's handoff state.
func runHandoff(ctx context.Context, e *env, args []string) error {
	pos, err := e.parseArgs(flag.NewFlagSet("handoff", flag.ContinueOnError), args, 1, 1)
	if err != nil {
		return err
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	h, err := s.Handoff(ctx, pos[0])
	if err != nil {
		return err
	}
	out := toHandoffJSON(pos[0], h)
	if e.json {
		return writeJSON(e.stdout, out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, kv := range [][2]string{{"state", out.State}, {"platform", out.Platform}, {"holder", out.Holder},
		{"error", out.Error}, {"updated", out.UpdatedAt}} {
		if kv[1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", kv[0], oneLine(kv[1]))
		}
	}
	return tw.Flush()
}
