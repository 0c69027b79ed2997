package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// env is what every command shares: the global flags, the streams and the
// store, opened on first use.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	dbPath     string
	json       bool
	patience   [3]string // write, transcript, open: flag values
	store      *db.Store
	openedPath string
}

// addGlobalFlags registers the global flags on fs, so they are accepted
// before the command and after it alike.
func (e *env) addGlobalFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.dbPath, "db", e.dbPath, "database `path`")
	fs.BoolVar(&e.json, "json", e.json, "print records as JSON (snake_case keys; a list is one array)")
	fs.StringVar(&e.patience[0], "write-patience", e.patience[0], "how long routine writes wait for the write lock (`duration`)")
	fs.StringVar(&e.patience[1], "transcript-patience", e.patience[1], "how long appends wait for the write lock (`duration`)")
	fs.StringVar(&e.patience[2], "open-patience", e.patience[2], "how long opening waits for another process's lock (`duration`)")
}

// parseGlobal parses the flags before the command name.
func (e *env) parseGlobal(args []string) ([]string, error) {
	fs := flag.NewFlagSet("sessiondb", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.addGlobalFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// parseArgs parses a command's flags (global ones included) wherever they
// stand among its positional arguments, and checks the positional count.
func (e *env) parseArgs(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	fs.SetOutput(io.Discard)
	e.addGlobalFlags(fs)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{fs.Name() + ": " + err.Error()}
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
	return o, nil
}

// open opens the store once per command.
func (e *env) open(ctx context.Context) (*db.Store, error) {
	return e.openStore(ctx, false)
}

// openRead opens the store for a command that only reads: as open does,
// and where the store cannot be written (a read-only mount or directory)
// read-only instead, so reading never needs write access. A store that
// does not exist yet is still created, as for every command.
func (e *env) openRead(ctx context.Context) (*db.Store, error) {
	return e.openStore(ctx, true)
}

func (e *env) openStore(ctx context.Context, orReadOnly bool) (*db.Store, error) {
	if e.store != nil {
		return e.store, nil
	}
	path, err := resolvePath(e.dbPath, os.Getenv, os.UserHomeDir)
	if err != nil {
		return nil, err
	}
	opts, err := e.options()
	if err != nil {
		return nil, err
	}
	s, err := db.Open(ctx, path, opts)
	if err != nil && orReadOnly && errors.Is(err, db.ErrReadOnly) {
		opts.ReadOnly = true
		ro, roErr := db.Open(ctx, path, opts)
		switch {
		case roErr == nil:
			s, err = ro, nil
		case !errors.Is(roErr, db.ErrNotFound): // no file: the writable open's error says more
			err = roErr
		}
	}
	if err != nil {
		return nil, err
	}
	e.store, e.openedPath = s, s.Path()
	return s, nil
}

func (e *env) closeStore() {
	if e.store != nil {
		if err := e.store.Close(); err != nil {
			fmt.Fprintln(e.stderr, "sessiondb: close:", err)
		}
		e.store = nil
	}
}
