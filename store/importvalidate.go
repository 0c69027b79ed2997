package store

import (
	"errors"
	"io"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// importValidator is the first pass of an import: it reads every line and
// checks it — its shape, its values, and its place in the file — writing
// nothing. It keeps the ids and titles of the file's sessions (both are
// unique) and where each session's lines lie.
type importValidator struct {
	o        ImportOptions
	maxBytes int64 // the engine's MaxMessageBytes
	errs     []ImportError
	blocks   []importBlock
	seen     map[string]bool // the file's session ids
	titles   map[string]string
	cur      *blockState
}

// blockState is what the validator knows about the session being read.
type blockState struct {
	id    string
	seq   int64
	keys  map[string]bool // idempotency keys
	pids  map[string]bool // platform message ids
	usage map[usageKey]bool
}

func newImportValidator(o ImportOptions, maxBytes int64) *importValidator {
	return &importValidator{o: o, maxBytes: maxBytes, seen: map[string]bool{}, titles: map[string]string{}}
}

// errFull stops the first pass once enough problems are listed.
var errFull = errors.New("too many problems")

func (v *importValidator) fail(line int, err error) error {
	v.errs = append(v.errs, ImportError{Line: line, Err: err})
	if len(v.errs) >= maxImportErrors {
		return errFull
	}
	return nil
}

// run reads r to the end (or until 50 problems are found). Only an I/O
// error is returned; problems with the content go to v.errs.
func (v *importValidator) run(r io.Reader) error {
	lr := newLineReader(r, v.o.MaxRecordBytes)
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errLineTooLong) {
			err = v.fail(lr.line, invalid("line longer than %d bytes", v.o.MaxRecordBytes))
		} else if err != nil {
			return err
		} else {
			err = v.check(lr, line)
		}
		if errors.Is(err, errFull) {
			return nil
		}
	}
	if lr.line == 0 {
		v.fail(1, invalid("empty file: no %s header", exportFormat))
	}
	v.closeBlock(lr.offset)
	return nil
}

// check validates one line in its place.
func (v *importValidator) check(lr *lineReader, line []byte) error {
	if lr.line > 1 {
		var rec messageRecord
		if decodeMessage(line, &rec) {
			return v.fail2(lr.line, v.checkMessage(&rec))
		}
	}
	typ, err := recordType(line)
	if err != nil {
		return v.fail(lr.line, err)
	}
	if lr.line == 1 {
		var h headerRecord
		if err := decodeStrict(line, &h); err != nil || typ != "header" || h.Format != exportFormat {
			return v.fail(lr.line, invalid("the first line is not a %s header", exportFormat))
		}
		if h.Version != exportVersion {
			return v.fail(lr.line, invalid("format version %d; this sessiondb reads version %d", h.Version, exportVersion))
		}
		return nil
	}
	switch typ {
	case "session":
		var rec sessionRecord
		v.closeBlock(lr.start)
		if err := decodeStrict(line, &rec); err != nil {
			return v.fail(lr.line, err)
		}
		if err := rec.check(); err != nil {
			return v.fail(lr.line, err)
		}
		if v.seen[rec.ID] {
			return v.fail(lr.line, invalid("session %q appears twice", rec.ID))
		}
		v.seen[rec.ID] = true
		if rec.Title != "" {
			key := rec.UserID + "\x00" + rec.Title // titles are unique per user
			if other, dup := v.titles[key]; dup {
				return v.fail(lr.line, invalid("sessions %q and %q have the same title %q (titles are unique per user)", other, rec.ID, rec.Title))
			}
			v.titles[key] = rec.ID
		}
		v.blocks = append(v.blocks, importBlock{id: rec.ID, start: lr.start})
		v.cur = &blockState{id: rec.ID, keys: map[string]bool{}, pids: map[string]bool{}, usage: map[usageKey]bool{}}
		return nil
	case "message":
		var rec messageRecord
		if err := decodeStrict(line, &rec); err != nil {
			return v.fail(lr.line, err)
		}
		return v.fail2(lr.line, v.checkMessage(&rec))
	case "usage":
		var rec usageRecord
		if err := decodeStrict(line, &rec); err != nil {
			return v.fail(lr.line, err)
		}
		if err := v.inBlock(rec.SessionID); err != nil {
			return v.fail(lr.line, err)
		}
		if err := rec.check(); err != nil {
			return v.fail(lr.line, err)
		}
		k := rec.key()
		if v.cur.usage[k] {
			return v.fail(lr.line, invalid("usage for model %q task %q billing route %q %q %q appears twice",
				rec.Model, rec.Task, rec.BillingProvider, rec.BillingBaseURL, rec.BillingMode))
		}
		v.cur.usage[k] = true
		return nil
	case "header":
		return v.fail(lr.line, invalid("a second header"))
	}
	return v.fail(lr.line, invalid("unknown record type %q", typ))
}

// fail2 records err when there is one.
func (v *importValidator) fail2(line int, err error) error {
	if err == nil {
		return nil
	}
	return v.fail(line, err)
}

func (v *importValidator) checkMessage(rec *messageRecord) error {
	if err := v.inBlock(rec.SessionID); err != nil {
		return err
	}
	if rec.Seq != v.cur.seq+1 {
		return invalid("message seq %d, want %d (messages are numbered 1, 2, ... in their session)", rec.Seq, v.cur.seq+1)
	}
	if err := rec.check(); err != nil {
		return err
	}
	// What the row will hold, as messageBytes counts it (tool calls are
	// kept twice: as JSON and as their searchable text).
	if err := checkSize(&driver.MessageInsertParams{SessionID: rec.SessionID, Role: rec.Role, Content: rec.Content,
		Reasoning: &rec.Reasoning, ReasoningDetails: &rec.ReasoningDetails, MetadataJson: &rec.Metadata,
		ReasoningContent: &rec.ReasoningContent, EffectDisposition: &rec.EffectDisposition,
		ToolCallsJson: rules.Ptr(string(rec.ToolCalls) + string(rec.ToolCalls)), PartsJson: rules.Ptr(string(rec.Parts))}, v.maxBytes); err != nil {
		return err
	}
	if rec.Seq > v.o.MaxMessagesPerSession {
		return invalid("session %q has more than %d messages", rec.SessionID, v.o.MaxMessagesPerSession)
	}
	if k := rec.IdempotencyKey; k != "" {
		if v.cur.keys[k] {
			return invalid("idempotency key %q appears twice in session %q", k, rec.SessionID)
		}
		v.cur.keys[k] = true
	}
	if pid := rec.PlatformMessageID; pid != "" {
		if v.cur.pids[pid] {
			return invalid("platform message id %q appears twice in session %q", pid, rec.SessionID)
		}
		v.cur.pids[pid] = true
	}
	// An origin in another session may lie outside the file (an export of
	// one continuation) or later in it: the writer links it when it can.
	if o := rec.Origin; o != nil {
		if err := rules.CheckID("origin session id", o.SessionID); err != nil {
			return err
		}
		if o.Seq < 1 || (o.SessionID == rec.SessionID && o.Seq >= rec.Seq) {
			return invalid("origin %s#%d is not an earlier message", o.SessionID, o.Seq)
		}
	}
	v.cur.seq++
	return nil
}

// inBlock checks that a row belongs to the session being read.
func (v *importValidator) inBlock(sessionID string) error {
	switch {
	case v.cur == nil:
		return invalid("a row before any session")
	case sessionID != v.cur.id:
		return invalid("a row of session %q inside session %q's lines", sessionID, v.cur.id)
	}
	return nil
}

// closeBlock ends the current session's lines at offset.
func (v *importValidator) closeBlock(offset int64) {
	if n := len(v.blocks); n > 0 && v.blocks[n-1].end == 0 {
		v.blocks[n-1].end = offset
	}
	v.cur = nil
}
