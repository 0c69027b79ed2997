package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// parseAge reads "90d", "12h", "1h30m": Go durations plus a days suffix.
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n <= 0 {
			return 0, usagef("bad age %q (want e.g. 90d or 36h)", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, usagef("bad age %q (want e.g. 90d or 36h)", s)
	}
	return d, nil
}

func runPrune(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	age := fs.String("older-than", "90d", "prune sessions ended and idle for longer than `AGE` (90d, 36h)")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	d, err := parseAge(*age)
	if err != nil {
		return err
	}
	s, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	res, err := s.Prune(ctx, d)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]int{"pruned": res.Pruned, "spared": res.Spared, "orphaned": res.Orphaned})
	}
	_, err = fmt.Fprintf(e.stdout, "pruned %s (spared %d: pinned, continued or leased; %s unlinked)\n",
		plural(int64(res.Pruned), "session"), res.Spared, plural(int64(res.Orphaned), "child session"))
	return err
}

func runVacuum(ctx context.Context, e *env, args []string) error {
	if _, err := e.parseArgs(flag.NewFlagSet("vacuum", flag.ContinueOnError), args, 0, 0); err != nil {
		return err
	}
	s, err := e.openFile(ctx, "vacuum", false, false)
	if err != nil {
		return err
	}
	stop := e.spinner("vacuum")
	res, err := s.Vacuum(ctx)
	stop()
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]int64{"bytes_before": res.SizeBefore, "bytes_after": res.SizeAfter,
			"free_pages_before": res.FreePagesBefore, "free_pages_after": res.FreePagesAfter})
	}
	_, err = fmt.Fprintf(e.stdout, "vacuumed: %s -> %s (%s reclaimed)\n",
		humanBytes(res.SizeBefore), humanBytes(res.SizeAfter), plural(res.FreePagesBefore-res.FreePagesAfter, "free page"))
	return err
}

func runStats(ctx context.Context, e *env, args []string) error {
	if _, err := e.parseArgs(flag.NewFlagSet("stats", flag.ContinueOnError), args, 0, 0); err != nil {
		return err
	}
	s, err := e.openFile(ctx, "stats", false, true)
	if err != nil {
		return err
	}
	in, err := s.Info(ctx)
	if err != nil {
		return err
	}
	fts := "ok"
	if in.FTSStale {
		fts = "stale (search scans; the next open rebuilds it)"
	}
	if e.json {
		return writeJSON(e.stdout, map[string]any{
			"path": in.Path, "sessions": in.Sessions, "messages": in.Messages,
			"file_bytes": in.FileBytes, "wal_bytes": in.WALBytes, "page_size": in.PageSize,
			"page_count": in.PageCount, "free_pages": in.FreePages, "freelist_ratio": in.FreelistRatio,
			"fts_stale": in.FTSStale, "schema_version": in.SchemaVersion, "journal_mode": in.JournalMode,
			"last_prune": in.LastPrune, "last_vacuum": in.LastVacuum,
		})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, r := range [][2]string{
		{"path", in.Path},
		{"sessions", strconv.FormatInt(in.Sessions, 10)},
		{"messages", strconv.FormatInt(in.Messages, 10)},
		{"file", humanBytes(in.FileBytes)},
		{"wal", humanBytes(in.WALBytes)},
		{"free pages", fmt.Sprintf("%d of %d (%.1f%%)", in.FreePages, in.PageCount, 100*in.FreelistRatio)},
		{"full-text index", fts},
		{"schema version", strconv.FormatInt(in.SchemaVersion, 10)},
		{"journal mode", in.JournalMode},
		{"last prune", orNever(in.LastPrune)},
		{"last vacuum", orNever(in.LastVacuum)},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", r[0], oneLine(r[1]))
	}
	return tw.Flush()
}

func orNever(s string) string {
	if s == "" {
		return "never"
	}
	return s
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
