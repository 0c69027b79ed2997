package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// CommandReceipt is a row of the display transcript that only a UI wrote:
// a slash command the user ran and what it printed ("/model" → "switched
// to …"). It is shown in its place (DisplayPage), and is never a message:
// no model view, search, message count, export of messages or converter
// sees it.
type CommandReceipt struct {
	// ID is the caller's id for the receipt, unique in the store: a retry
	// under the same ID records nothing twice.
	ID        string
	SessionID string
	// Command is the command's name without its leading "/" ("model").
	Command string
	// Output is what the command printed, as given.
	Output string
	// AfterMessageID is the session's newest message when the receipt
	// was recorded (0: none yet): the receipt is shown after it.
	AfterMessageID int64
	CreatedAt      time.Time
}

// NewCommandReceipt is a receipt to record.
type NewCommandReceipt struct {
	ID      string // the caller's id (a UUID, say), unique in the store
	Command string // one token; a leading "/" is dropped
	Output  string // any UTF-8 text
}

// RecordCommandReceipt records a command receipt in sessionID's display
// transcript, after the session's newest message, and moves the session's
// display revision. It is idempotent by r.ID: recording the same receipt
// again (a retry, a second UI handle) returns the first record and
// changes nothing; the same ID with another session, command or output is
// an ErrIdempotencyConflict. A command that is not one token, or text
// that is not UTF-8, is ErrInvalidInput; an unknown session ErrNotFound.
func (s *Store) RecordCommandReceipt(ctx context.Context, sessionID string, r NewCommandReceipt) (CommandReceipt, error) {
	const op = "record command receipt"
	r.Command = strings.TrimPrefix(r.Command, "/")
	if err := firstErr(rules.CheckID("session id", sessionID), rules.CheckLabel("receipt id", r.ID),
		rules.CheckText("command output", r.Output), checkCommand(r.Command)); err != nil {
		return CommandReceipt{}, opErr(op, sessionID, err)
	}
	if r.ID == "" {
		return CommandReceipt{}, opErr(op, sessionID, invalid("empty receipt id"))
	}
	var out CommandReceipt
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		out = CommandReceipt{}
		if got, err := tx.CommandReceiptGet(ctx, r.ID); err == nil {
			out = receiptFromRow(got)
			return sameReceipt(out, sessionID, r)
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if err := sessionMustExist(ctx, tx, sessionID); err != nil {
			return err
		}
		after, err := tx.MessageLastID(ctx, sessionID)
		if err != nil {
			return err
		}
		p := driver.CommandReceiptInsertParams{ReceiptID: r.ID, SessionID: sessionID, Command: r.Command,
			Output: r.Output, AfterMessageID: after, CreatedAt: now()}
		n, err := tx.CommandReceiptInsert(ctx, p)
		if err != nil {
			return err
		}
		if n == 0 { // another handle recorded it since the read above
			got, err := tx.CommandReceiptGet(ctx, r.ID)
			if err != nil {
				return err
			}
			out = receiptFromRow(got)
			return sameReceipt(out, sessionID, r)
		}
		if err := tx.SessionBumpDisplayRevision(ctx, sessionID); err != nil {
			return err
		}
		out = CommandReceipt{ID: r.ID, SessionID: sessionID, Command: r.Command, Output: r.Output,
			AfterMessageID: after, CreatedAt: fromMillis(p.CreatedAt)}
		return nil
	})
	return out, err
}

// CommandReceipts returns a session's command receipts in the order they
// were recorded (the display transcript places them; this lists them).
func (s *Store) CommandReceipts(ctx context.Context, sessionID string) ([]CommandReceipt, error) {
	var out []CommandReceipt
	err := s.snapshot(ctx, "list command receipts", sessionID, func(q driver.Executor) error {
		out = nil
		if err := sessionMustExist(ctx, q, sessionID); err != nil {
			return err
		}
		rows, err := q.CommandReceiptList(ctx, sessionID)
		for _, r := range rows {
			out = append(out, receiptFromRow(r))
		}
		return err
	})
	return out, err
}

// checkCommand refuses a command name that is not one token.
func checkCommand(c string) error {
	if c == "" || strings.Contains(c, "/") {
		return invalid("command %q is not one token", c)
	}
	return checkToken("command", c)
}

// checkToken refuses a name with spaces or control characters in it (a
// command, a display kind): one word a UI may show or switch on.
func checkToken(what, v string) error {
	if strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f) }) {
		return invalid("%s %q is not one token", what, v)
	}
	return rules.CheckLabel(what, v)
}

// sameReceipt returns an ErrIdempotencyConflict unless the stored receipt
// is r recorded into sessionID.
func sameReceipt(stored CommandReceipt, sessionID string, r NewCommandReceipt) error {
	field := ""
	switch {
	case stored.SessionID != sessionID:
		field = "session"
	case stored.Command != r.Command:
		field = "command"
	case stored.Output != r.Output:
		field = "output"
	default:
		return nil
	}
	return fmt.Errorf("%w: command receipt %q is already recorded with another %s", ErrIdempotencyConflict, r.ID, field)
}

func receiptFromRow(r driver.CommandReceipt) CommandReceipt {
	return CommandReceipt{ID: r.ReceiptID, SessionID: r.SessionID, Command: r.Command, Output: r.Output,
		AfterMessageID: r.AfterMessageID, CreatedAt: fromMillis(r.CreatedAt)}
}
