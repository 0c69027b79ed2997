package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

// env is what every command shares: the global flags, the streams and the
// store, opened on first use.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	dbPath   string
	json     bool
	patience [3]string // write, transcript, open: flag values
	opened   opened    // the store, once a command opened it
	version  bool      // --version before the command

	// describe asks the command's first parseArgs to hand its flag set
	// back (in described) instead of parsing: help and completion list
	// the flags a command really takes.
	describe  bool
	described *flag.FlagSet
}

// addGlobalFlags registers the global flags on fs, so they are accepted
// before the command and after it alike.
func (e *env) addGlobalFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.dbPath, "db", e.dbPath, "database `path`, or a postgres:// URL for a PostgreSQL server (default: $SESSIONDB_PATH, else $XDG_STATE_HOME/sessiondb/state.db, else ~/.local/state/sessiondb/state.db)")
	fs.BoolVar(&e.json, "json", e.json, "print records as JSON (snake_case keys; a list is one array)")
	fs.StringVar(&e.patience[0], "write-patience", e.patience[0], "how long a routine write (session, title, meta, flag, rewind, delete) waits for another process's write lock, a Go `duration` (default: $SESSIONDB_WRITE_PATIENCE, else 20s)")
	fs.StringVar(&e.patience[1], "transcript-patience", e.patience[1], "how long append waits for another process's write lock; a Go `duration`, longer than the write patience, as losing a turn costs more (default: $SESSIONDB_TRANSCRIPT_PATIENCE, else 3 × the write patience when that is set, else 60s)")
	fs.StringVar(&e.patience[2], "open-patience", e.patience[2], "how long opening waits for another process's lock, e.g. a migration or VACUUM, a Go `duration` (default: $SESSIONDB_OPEN_PATIENCE, else 20s)")
}

// parseGlobal parses the flags before the command name.
func (e *env) parseGlobal(args []string) ([]string, error) {
	fs := flag.NewFlagSet("sessiondb", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.addGlobalFlags(fs)
	fs.BoolVar(&e.version, "version", false, "print the version")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// parseArgs parses a command's flags (global ones included) wherever they
// stand among its positional arguments, and checks the positional count.
// -h or --help anywhere prints the command's help (errHelpShown).
func (e *env) parseArgs(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	if e.describe {
		e.described = fs
		return nil, errDescribed
	}
	fs.SetOutput(io.Discard)
	e.addGlobalFlags(fs)
	var pos []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, e.helpFor(fs.Name())
		} else if err != nil {
			return nil, usageError{fs.Name() + ": " + err.Error() + " (`sessiondb help " + fs.Name() + "` lists its flags)"}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) < minPos || len(pos) > maxPos {
		return nil, usagef("%s: expected %s", fs.Name(), argCount(minPos, maxPos))
	}
	return pos, nil
}

// helpFor prints the help of the command named by a flag set ("search",
// "session new") and returns errHelpShown.
func (e *env) helpFor(name string) error {
	cmd, sub, _ := strings.Cut(name, " ")
	c, ok := lookup(cmd)
	if !ok {
		return fmt.Errorf("no command %q for flag set", name)
	}
	if err := printCommandHelp(e.stdout, c, sub); err != nil {
		return err
	}
	return errHelpShown
}

func argCount(lo, hi int) string {
	if lo == hi {
		return fmt.Sprintf("%d argument(s)", lo)
	}
	return fmt.Sprintf("%d to %d arguments", lo, hi)
}

// resolvePath picks the database path: --db, $SESSIONDB_PATH,
// $XDG_STATE_HOME/sessiondb/state.db, ~/.local/state/sessiondb/state.db.
func resolvePath(flagValue string, getenv func(string) string, home func() (string, error)) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if p := getenv("SESSIONDB_PATH"); p != "" {
		return p, nil
	}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "sessiondb", "state.db"), nil
	}
	h, err := home()
	if err != nil {
		return "", fmt.Errorf("no --db, $SESSIONDB_PATH or $XDG_STATE_HOME, and no home directory: %w", err)
	}
	return filepath.Join(h, ".local", "state", "sessiondb", "state.db"), nil
}

// options builds the store options from flags, else the environment.
func (e *env) options() (db.Options, error) {
	var o db.Options
	targets := []*time.Duration{&o.WritePatience, &o.TranscriptPatience, &o.OpenPatience}
	names := []string{"SESSIONDB_WRITE_PATIENCE", "SESSIONDB_TRANSCRIPT_PATIENCE", "SESSIONDB_OPEN_PATIENCE"}
	for i, target := range targets {
		v, from := e.patience[i], "--"+strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(names[i], "SESSIONDB_"), "_", "-"))
		if v == "" {
			v, from = os.Getenv(names[i]), "$"+names[i]
		}
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return o, usagef("%s: %q is not a positive Go duration (e.g. 30s, 2m)", from, v)
		}
		*target = d
	}
	o.Logger = e.logger()
	if o.WritePatience > 0 && o.TranscriptPatience == 0 {
		// The library's default (at least 60 s) suits a gateway; a person
		// who asked for a short write patience expects a short append too.
		o.TranscriptPatience = 3 * o.WritePatience
	}
	return o, nil
}

// logger is the store's logger: warnings on stderr, as text lines
// without a timestamp, or as JSON objects under --json.
func (e *env) logger() *slog.Logger {
	opts := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	if e.json {
		return slog.New(slog.NewJSONHandler(e.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(e.stderr, opts))
}

// open opens the store once per command, creating the database (and its
// directory) when there is none: for the commands that start one (init,
// session new, meta set, import, demo).
func (e *env) open(ctx context.Context) (*store.Store, error) {
	return e.openStore(ctx, true, false)
}

// openExisting opens the store of a command that changes what is there:
// where no database exists it fails with noDatabaseError and creates
// nothing (no directory, file or lock), so a mistyped --db is not
// mistaken for an empty store.
func (e *env) openExisting(ctx context.Context) (*store.Store, error) {
	return e.openStore(ctx, false, false)
}

// openRead opens the store for a command that only reads: as openExisting
// does, and where the store cannot be written (a read-only mount or
// directory) read-only instead, so reading never needs write access.
func (e *env) openRead(ctx context.Context) (*store.Store, error) {
	return e.openStore(ctx, false, true)
}

// openFile opens the SQLite file for a command that works on the file
// itself; on a PostgreSQL URL it fails with fileOperationError.
func (e *env) openFile(ctx context.Context, command string, create, orReadOnly bool) (*db.Store, error) {
	if _, err := e.filePath(command); err != nil {
		return nil, err
	}
	if _, err := e.openStore(ctx, create, orReadOnly); err != nil {
		return nil, err
	}
	return e.opened.file, nil
}

// filePath is the database path of a command that works on the SQLite
// file without opening it as a store (verify, repair); on a PostgreSQL URL
// it fails with fileOperationError.
func (e *env) filePath(command string) (string, error) {
	location, err := resolvePath(e.dbPath, os.Getenv, os.UserHomeDir)
	if err != nil {
		return "", err
	}
	if isServerURL(location) {
		return "", fileOperationError{command, redactURL(location)}
	}
	return location, nil
}

func (e *env) openStore(ctx context.Context, create, orReadOnly bool) (*store.Store, error) {
	if e.opened.store != nil {
		return e.opened.store, nil
	}
	location, err := resolvePath(e.dbPath, os.Getenv, os.UserHomeDir)
	if err != nil {
		return nil, err
	}
	opts, err := e.options()
	if err != nil {
		return nil, err
	}
	o, err := openLocation(ctx, location, opts, create, orReadOnly)
	if err != nil {
		return nil, err
	}
	e.opened = o
	return o.store, nil
}

// sessionCount is the number of sessions of the env's store where it is
// cheap to know, else -1 (see opened.sessionCount).
func (e *env) sessionCount(ctx context.Context) int64 {
	return e.opened.sessionCount(ctx)
}

// noDatabaseError: a command that needs a database found none (exit 3).
type noDatabaseError struct{ path string }

func (n noDatabaseError) Error() string {
	return fmt.Sprintf("no database at %s (sessiondb init creates one)", n.path)
}

func (e *env) closeStore() {
	if e.opened.store != nil {
		if err := e.opened.close(); err != nil {
			fmt.Fprintln(e.stderr, "sessiondb: close:", err)
		}
		e.opened = opened{}
	}
}
