package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sessiondb/sessiondb/db"
)

// errorCodes maps an error to the stable code --json prints for it and
// the exit code, first match wins. The codes are part of the CLI's
// interface: scripts branch on them, never on the message.
var errorCodes = []struct {
	is   func(error) bool
	code string
	exit int
}{
	{func(err error) bool { return errors.As(err, new(usageError)) }, "usage", exitUsage},
	{func(err error) bool { return errors.As(err, new(noDatabaseError)) }, "no_database", exitNotFound},
	{func(err error) bool { return errors.As(err, new(fileOperationError)) }, "file_operation", exitUsage},
	{sentinel(db.ErrNotAStore), "not_a_store", exitNotAStore},
	{sentinel(db.ErrInvalidInput), "invalid_input", exitUsage},
	{sentinel(db.ErrTooLarge), "too_large", exitUsage},
	{sentinel(db.ErrLocked), "locked", exitLocked},
	{sentinel(db.ErrLeaseHeld), "lease_held", exitLocked},
	{sentinel(db.ErrNotFound), "not_found", exitNotFound},
	{sentinel(db.ErrExists), "exists", exitError},
	{sentinel(db.ErrConflict), "conflict", exitError},
	{sentinel(db.ErrLeaseLost), "lease_lost", exitError},
	{sentinel(db.ErrSessionClosed), "session_closed", exitError},
	{sentinel(db.ErrCommitUnknown), "commit_unknown", exitError},
	{sentinel(db.ErrCorrupt), "corrupt", exitError},
	{sentinel(db.ErrNotDatabase), "not_a_database", exitError},
	{sentinel(db.ErrReadOnly), "read_only", exitError},
	{sentinel(db.ErrReplaced), "replaced", exitError},
	{sentinel(db.ErrSchemaTooNew), "schema_too_new", exitError},
	{sentinel(db.ErrSchemaBehind), "schema_behind", exitError},
	{sentinel(db.ErrIdempotencyConflict), "idempotency_conflict", exitError},
	{sentinel(db.ErrCoolingDown), "cooling_down", exitLocked},
	{sentinel(db.ErrForeignSchema), "foreign_schema", exitError},
	{sentinel(db.ErrAliased), "aliased", exitError},
	{sentinel(db.ErrDiskFull), "disk_full", exitError},
	{sentinel(db.ErrTooManyOpenFiles), "too_many_open_files", exitError},
	{sentinel(db.ErrIO), "io_error", exitError},
	{sentinel(db.ErrInternal), "internal", exitError},
	{sentinel(db.ErrClosed), "closed", exitError},
	{sentinel(context.Canceled), "interrupted", exitError},
}

func sentinel(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// classify returns err's --json code and exit code.
func classify(err error) (code string, exit int) {
	for _, c := range errorCodes {
		if c.is(err) {
			return c.code, c.exit
		}
	}
	return "error", exitError
}

// errorJSON is an error under --json: one object on one line of stderr.
type errorJSON struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// printError prints err on stderr: "sessiondb: message" on one inert line
// (an error can quote ids, titles or a lock holder's command line), or
// under --json {"error":"code","message":"…"}.
func printError(stderr io.Writer, asJSON bool, err error) {
	if !asJSON {
		fmt.Fprintln(stderr, "sessiondb:", oneLine(err.Error()))
		return
	}
	code, _ := classify(err)
	enc := json.NewEncoder(stderr)
	enc.SetEscapeHTML(false)
	enc.Encode(errorJSON{Error: code, Message: err.Error()})
}
