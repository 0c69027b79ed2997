package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessiondb/sessiondb/db"
)

func runExport(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	var o db.ExportOptions
	fs.StringVar(&o.SessionID, "session", "", "export only this session `ID`")
	fs.BoolVar(&o.Lineage, "lineage", false, "with --session: its whole compression lineage")
	out := fs.String("o", "", "write to `FILE` (default standard output)")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if o.Lineage && o.SessionID == "" {
		return usagef("export: --lineage needs --session")
	}
	if *out != "" {
		if err := refuseIrregularTarget(*out); err != nil {
			return err
		}
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	var w io.Writer = e.stdout
	var tmp *os.File
	if *out != "" {
		// Written beside the target and renamed into place once complete:
		// an interrupted export never leaves a truncated file behind.
		tmp, err = os.CreateTemp(filepath.Dir(*out), "."+filepath.Base(*out)+".*")
		if err != nil {
			return err
		}
		defer func() {
			tmp.Close()
			os.Remove(tmp.Name())
		}()
		w = tmp
	}
	total := int64(-1)
	if o.SessionID == "" {
		total = e.sessionCount(ctx)
	}
	bar := e.bar(total, "export")
	o.OnProgress = func(sessions, _ int64) { bar.Set64(sessions) }
	res, err := s.Export(ctx, w, o)
	bar.Finish()
	if err != nil {
		return err
	}
	if tmp != nil {
		if err := tmp.Sync(); err != nil {
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if err := refuseIrregularTarget(*out); err != nil { // planted while the export ran
			return err
		}
		if err := os.Rename(tmp.Name(), *out); err != nil {
			return err
		}
		summary := fmt.Sprintf("exported %s, %s to %s\n", plural(res.Sessions, "session"), plural(res.Messages, "message"), *out)
		if e.json {
			return writeJSON(e.stdout, map[string]any{"sessions": res.Sessions, "messages": res.Messages, "file": *out})
		}
		_, err = fmt.Fprint(e.stderr, summary)
	}
	return err
}

// refuseIrregularTarget refuses an export target that exists and is not a
// regular file. The export is renamed into place, which would replace a
// symlink, a FIFO or a device node by a regular file (and as root, /dev/sda
// by a transcript); write to standard output to feed a pipe.
func refuseIrregularTarget(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // absent, or the rename will report it
	}
	var what string
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		what = "a symbolic link"
	case fi.Mode()&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case fi.Mode()&fs.ModeDevice != 0:
		what = "a device"
	case fi.IsDir():
		what = "a directory"
	default:
		what = "not a regular file"
	}
	return fmt.Errorf("export -o: %w (omit -o to write to standard output)", &db.SideFileError{Path: path, What: what})
}

func runImport(ctx context.Context, e *env, args []string) error {
	pos, err := e.parseArgs(flag.NewFlagSet("import", flag.ContinueOnError), args, 1, 1)
	if err != nil {
		return err
	}
	var r io.Reader = e.stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return usagef("import: %v", err)
		}
		defer f.Close()
		r = f
	}
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	bar := e.bar(-1, "import")
	res, err := s.Import(ctx, r, db.ImportOptions{OnProgress: func(done, total int64) {
		bar.ChangeMax64(total)
		bar.Set64(done)
	}})
	bar.Finish()
	if e.json {
		errs := make([]string, len(res.Errors))
		for i, x := range res.Errors {
			errs[i] = x.Error()
		}
		if jerr := writeJSON(e.stdout, map[string]any{"imported": res.Imported, "topped_up": res.ToppedUp, "skipped": res.Skipped,
			"detached": res.Detached, "messages": res.Messages, "errors": errs}); jerr != nil {
			return jerr
		}
		return err
	}
	for _, x := range res.Errors {
		fmt.Fprintln(e.stderr, "sessiondb: import:", x)
	}
	for _, x := range res.Skips {
		fmt.Fprintf(e.stderr, "sessiondb: import: skipped %s, which differs in the store: %s\n", x.SessionID, x.Reason)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "imported %s (%s)%s\n",
		plural(int64(res.Imported), "session"), plural(int64(res.Messages), "message"), importTail(res, ""))
	return err
}

// importTail is the rest of an import's or a copy's summary: what was
// topped up, skipped or detached, each only when it happened.
func importTail(res db.ImportResult, where string) string {
	var parts []string
	if res.ToppedUp > 0 {
		parts = append(parts, fmt.Sprintf("topped up %s", plural(int64(res.ToppedUp), "session")))
	}
	if res.Skipped > 0 {
		exist := "that exist"
		if res.Skipped == 1 {
			exist = "that exists"
		}
		parts = append(parts, strings.TrimSpace(fmt.Sprintf("skipped %d %s %s", res.Skipped, exist, where)))
	}
	if res.Detached > 0 {
		parts = append(parts, fmt.Sprintf("%s without its parent link", plural(int64(res.Detached), "session")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}
