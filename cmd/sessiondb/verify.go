package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/sessiondb/sessiondb/db"
)

// verifyExit is set by runVerify: verify has its own exit codes (0 verified
// or empty, 1 damaged or absent, 2 the check could not run: another
// process's lock, a permission, a read-only medium, a full disk, no
// descriptors left — anything but damage; 4 not a sessiondb store at all:
// another program's database, a text file, a directory, which repair
// leaves alone).
type verifyExit struct{ code int }

func (v verifyExit) Error() string { return "" }

type verifyJSON struct {
	Path    string   `json:"path"`
	Health  string   `json:"health"`
	Details []string `json:"details,omitempty"`
	FTS     string   `json:"fts,omitempty"`
}

func runVerify(ctx context.Context, e *env, args []string) error {
	if _, err := e.parseArgs(flag.NewFlagSet("verify", flag.ContinueOnError), args, 0, 0); err != nil {
		return err
	}
	path, err := e.filePath("verify")
	if err != nil {
		return err
	}
	r, err := db.Verify(ctx, path)
	if err != nil {
		printError(e.stderr, e.json, fmt.Errorf("could not check: %w", err))
		return verifyExit{2}
	}
	if e.json {
		if err := writeJSON(e.stdout, verifyJSON{r.Path, string(r.Health), r.Details, r.FTS}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "%s: %s\n", r.Path, r.Health)
		if r.FTS != "" && r.FTS != "ok" {
			fmt.Fprintf(e.stdout, "  full-text index: %s\n", r.FTS)
		}
		for _, d := range r.Details {
			fmt.Fprintln(e.stdout, "  "+strings.TrimSpace(d))
		}
	}
	switch r.Health {
	case db.HealthVerified, db.HealthEmpty:
		return nil
	case db.HealthNotAStore:
		return verifyExit{exitNotAStore}
	case db.HealthBusy:
		fmt.Fprintln(e.stderr, "sessiondb: could not check: another process holds a lock on the database; check again later")
		return verifyExit{2}
	}
	return verifyExit{1}
}
