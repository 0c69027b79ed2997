package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/pg"
	"github.com/sessiondb/sessiondb/store"
)

// opened is one store the CLI opened, on whichever engine its location
// names. Commands speak the domain (store); file is set only on SQLite,
// for the operations on the file itself.
type opened struct {
	store *store.Store
	file  *db.Store // nil on PostgreSQL
	where string    // the path, or the URL without its password
	close func() error
}

// sessionCount is the number of sessions where it is cheap to know (a
// SQLite file's Info), else -1: a progress bar's total or a listing's
// "remaining".
func (o opened) sessionCount(ctx context.Context) int64 {
	if o.file == nil {
		return -1
	}
	in, err := o.file.Info(ctx)
	if err != nil {
		return -1
	}
	return in.Sessions
}

// isServerURL says whether a --db value names a PostgreSQL server rather
// than a SQLite file: a postgres:// or postgresql:// URL.
func isServerURL(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// redactURL shows a connection URL without its password, for output and
// error messages.
func redactURL(location string) string {
	u, err := url.Parse(location)
	if err != nil {
		return "postgres://…" // unparsable: pg.Open says why, without echoing it
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// fileOperationError: a command that works on the SQLite file itself
// (verify, repair, vacuum, stats, a Hermes import, bench) was pointed at a
// PostgreSQL server (exit 2).
type fileOperationError struct {
	command string
	where   string
}

func (f fileOperationError) Error() string {
	return fmt.Sprintf("%s is an operation on a SQLite file and does not run on PostgreSQL (%s); "+
		"give --db a file path, or use the server's own tools", f.command, f.where)
}

// openLocation opens the store at location: a PostgreSQL server for a
// postgres:// URL, else a SQLite file. create and orReadOnly are as for
// env.openStore; on PostgreSQL the schema is created when missing and the
// server decides what may be written.
func openLocation(ctx context.Context, location string, o db.Options, create, orReadOnly bool) (opened, error) {
	if isServerURL(location) {
		s, err := pg.Open(ctx, location, pg.Options{WritePatience: o.WritePatience,
			TranscriptPatience: o.TranscriptPatience, OpenPatience: o.OpenPatience, Logger: o.Logger})
		if err != nil {
			return opened{}, err
		}
		return opened{store: s.Store, where: redactURL(location), close: s.Close}, nil
	}
	if !create {
		if _, err := os.Stat(location); errors.Is(err, fs.ErrNotExist) {
			return opened{}, noDatabaseError{location}
		}
	}
	// A read never makes a store of what it finds (an empty file, an
	// empty SQLite database) nor moves a torn one aside.
	o.ExistingOnly = orReadOnly
	s, err := db.Open(ctx, location, o)
	if err != nil && orReadOnly && errors.Is(err, db.ErrReadOnly) {
		o.ReadOnly = true
		ro, roErr := db.Open(ctx, location, o)
		switch {
		case roErr == nil:
			s, err = ro, nil
		case !errors.Is(roErr, db.ErrNotFound): // no file: the writable open's error says more
			err = roErr
		}
	}
	if err != nil {
		return opened{}, err
	}
	return opened{store: s.Store, file: s, where: s.Path(), close: s.Close}, nil
}
