package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/sessiondb/sessiondb/db"
)

type repairJSON struct {
	Path       string   `json:"path"`
	Repaired   bool     `json:"repaired"`
	Strategy   string   `json:"strategy"`
	BackupPath string   `json:"backup_path"`
	Before     string   `json:"before"`
	After      string   `json:"after"`
	Tried      []string `json:"tried,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// runRepair repairs the database in place (exit 0 repaired or nothing to
// repair, 1 not repaired).
func runRepair(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("repair", flag.ContinueOnError)
	var o db.RepairOptions
	fs.BoolVar(&o.NoBackup, "no-backup", false, "skip the backup copy (only when the disk cannot hold one)")
	fs.BoolVar(&o.Force, "force", false, "run even after 3 failed repairs of this exact file")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	path, err := e.filePath("repair")
	if err != nil {
		return err
	}
	stop := e.spinner("repair")
	r, err := db.Repair(ctx, path, o)
	stop()
	if e.json {
		if jerr := writeJSON(e.stdout, repairJSON{r.Path, r.Repaired, r.Strategy, r.BackupPath,
			string(r.Before), string(r.After), r.Tried, r.Error}); jerr != nil {
			return jerr
		}
	} else if err == nil {
		switch r.Strategy {
		case "none":
			fmt.Fprintf(e.stdout, "%s: %s, nothing to repair\n", r.Path, r.Before)
		default:
			fmt.Fprintf(e.stdout, "%s: repaired (%s); was %s, now %s\n", r.Path, r.Strategy, r.Before, r.After)
			if r.BackupPath != "" {
				fmt.Fprintf(e.stdout, "  backup: %s\n", r.BackupPath)
			}
		}
	}
	return err
}
