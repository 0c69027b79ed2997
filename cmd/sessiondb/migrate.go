package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/pg"
	"github.com/sessiondb/sessiondb/store"
)

const migrateUsage = "migrate [--status]"

// migrateJSON is migrate's record under --json: the step's versions, or
// with --status where the schema stands.
type migrateJSON struct {
	Where   string `json:"where"`
	From    *int64 `json:"from,omitempty"`
	To      *int64 `json:"to,omitempty"`
	Applied *bool  `json:"applied,omitempty"`
	Version *int64 `json:"version,omitempty"`
	Latest  int64  `json:"latest"`
	State   string `json:"state,omitempty"` // --status: current, behind or ahead
}

// runMigrate is the deploy step: it brings the store (a file, created when
// missing, or a postgres:// schema) to this build's schema version. With
// --status it only reads, and prints the version and whether it is
// current: exit 0 current, 1 behind or ahead (the output says which).
func runMigrate(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	status := fs.Bool("status", false, "only print the schema version and whether it is current (exit 0 current, 1 behind or ahead); changes nothing")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	location, err := resolvePath(e.dbPath, os.Getenv, os.UserHomeDir)
	if err != nil {
		return err
	}
	opts, err := e.options()
	if err != nil {
		return err
	}
	if *status {
		return migrateStatus(ctx, e, location)
	}
	var m store.Migration
	if isServerURL(location) {
		m, err = pg.MigrateStore(ctx, location, pg.Options{WritePatience: opts.WritePatience,
			TranscriptPatience: opts.TranscriptPatience, OpenPatience: opts.OpenPatience, Logger: opts.Logger})
		m.Where = redactURL(location) + " " + m.Where
	} else {
		m, err = db.Migrate(ctx, location, opts)
	}
	if err != nil {
		return err
	}
	latest, applied := m.To, m.Applied()
	if e.json {
		return writeJSON(e.stdout, migrateJSON{Where: m.Where, From: &m.From, To: &m.To, Applied: &applied, Latest: latest})
	}
	if applied {
		_, err = fmt.Fprintf(e.stdout, "%s: migrated from schema version %d to %d\n", m.Where, m.From, m.To)
	} else {
		_, err = fmt.Fprintf(e.stdout, "%s: schema version %d, current (nothing to migrate)\n", m.Where, m.To)
	}
	return err
}

// migrateStatus prints where the store's schema stands, reading only.
func migrateStatus(ctx context.Context, e *env, location string) error {
	var st store.SchemaStatus
	var err error
	if isServerURL(location) {
		st, err = pg.SchemaVersion(ctx, location, pg.Options{})
		st.Where = redactURL(location) + " " + st.Where
	} else {
		st, err = db.SchemaVersion(ctx, location)
	}
	if err != nil {
		return err
	}
	state, say := "current", "current"
	switch {
	case st.Behind():
		state, say = "behind", "behind: run sessiondb migrate"
	case st.Ahead():
		state, say = "ahead", "ahead: a newer sessiondb migrated it; upgrade this one"
	}
	if e.json {
		err = writeJSON(e.stdout, migrateJSON{Where: st.Where, Version: &st.Version, Latest: st.Latest, State: state})
	} else {
		_, err = fmt.Fprintf(e.stdout, "%s: schema version %d, this sessiondb's is %d: %s\n", st.Where, st.Version, st.Latest, say)
	}
	if err != nil || st.Current() {
		return err
	}
	return verifyExit{1} // verify's kind of exit: the output said why, nothing goes to stderr
}
