// Package hermes imports the history of Hermes, the Python store sessiondb
// succeeds, from its state.db into a sessiondb store on any engine: the
// SQLite file is read read-only through the SQLite engine (db.OpenForeign)
// and written through package store's verbs, so a PostgreSQL store takes it
// as a SQLite one does, with the same result.
package hermes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store"
)

// hermesOrigin names Hermes in imported_sessions.
const hermesOrigin = "hermes"

// defaultHermesBatch is how many source messages one import transaction
// writes: large enough that a 100k-message file commits a hundred times,
// not a hundred thousand; small enough that other writers get the lock.
const defaultHermesBatch = 1000

// Options tune Import.
type Options struct {
	// OnProgress, when set, is called as the import advances, with the
	// source messages dealt with so far and the source's total.
	OnProgress func(done, total int64)
	// BatchMessages caps the source messages written per transaction
	// (default 1000).
	BatchMessages int
}

// Result says what Import did. Every source session is counted once, in
// Imported, Updated, Unchanged, Skipped or Refused.
type Result struct {
	Imported  int   // sessions new to the store
	Updated   int   // sessions imported before that the source changed since (new messages, states, end, usage)
	Unchanged int   // sessions imported before, unchanged in the source
	Skipped   int   // the id belongs to a session that was not imported from Hermes: left alone
	Refused   int   // sessions sessiondb cannot hold (an invalid id, no start time)
	Messages  int64 // messages written
	// Restated counts messages whose state changed in the source since the
	// last import (rewound, compacted) and were updated.
	Restated int64
	Usage    int // per-model usage rows written
	Meta     int // state_meta keys written (as "hermes/<key>")
	Detached int // sessions imported without their parent link (parent absent or refused, or a cycle)
	Untitled int // sessions imported without their title: another session of the store has it
	// NotRepresentable counts the source values sessiondb has no place for,
	// by "table.column" (and why, in brackets), and the rows of tables it
	// does not read as "table NAME". Nothing is dropped without a count.
	NotRepresentable map[string]int64
	// RefusedMessages counts messages not imported, by reason (an unknown
	// role, text that is not UTF-8).
	RefusedMessages map[string]int64
	// Source is the path read.
	Source string
}

// NothingNew reports whether the import found nothing to write: every
// session was imported before and is unchanged (or not importable).
func (r Result) NothingNew() bool {
	return r.Imported == 0 && r.Updated == 0 && r.Messages == 0 && r.Restated == 0 && r.Meta == 0
}

// Import imports a Hermes state.db (the Python store sessiondb succeeds)
// at path into s: every session with its messages, lineage, titles, flags,
// handoff, usage and meta. The file is opened read-only and read in one
// snapshot, so a Hermes process may go on using it: nothing is written to
// it, it is never migrated, its WAL is read and never checkpointed, and no
// file is created beside it (see db.OpenForeign).
//
// Every schema version the reference store wrote is read, each as far as
// it has columns: a column a version lacks counts as its rows had it then
// (a file without messages.active, before v8, holds only live rows). A
// version without the columns every import needs is refused with an
// *UnsupportedVersionError naming it.
//
// The import is idempotent. Each message is keyed by its source row id, and
// each imported session remembers a fingerprint of its source: a second
// run writes nothing (NothingNew), and a run after Hermes wrote more brings
// only what is new — new sessions, new messages, changed message states, a
// session's end and grown usage. A session whose id the store already uses
// for one of its own is skipped whole. Work is committed in batches, so a
// run stopped half-way (a crash, ctx) resumes where it left off when run
// again. The writes are a bulk load (store.BulkLoad): on SQLite the search
// index has caught up when Import returns.
//
// Hermes's Unix-second timestamps become milliseconds. A child's kind
// follows Hermes's rules (compression continuations, delegates for
// sub-agents, branches, resets, tool sessions). A platform message id is
// unique per session in sessiondb while Hermes may repeat one: the first
// row keeps it, a later row keeps it in its Metadata under
// "duplicate_platform_message_id" (as migration 9 does to older files).
// What sessiondb cannot hold is counted in the result, never dropped
// silently.
func Import(ctx context.Context, s *store.Store, path string, o Options) (Result, error) {
	const op = "import hermes"
	res := Result{Source: path, NotRepresentable: map[string]int64{}, RefusedMessages: map[string]int64{}}
	if s == nil {
		return res, opErr(op, "", fmt.Errorf("%w: no store", store.ErrInvalidInput))
	}
	if o.BatchMessages <= 0 {
		o.BatchMessages = defaultHermesBatch
	}
	src, err := openHermes(ctx, path)
	if err != nil {
		return res, opErr(op, "", fmt.Errorf("open %s: %w", path, err))
	}
	defer src.close()
	total, err := src.count(ctx, "SELECT COUNT(*) FROM messages")
	if err != nil {
		return res, opErr(op, "", err)
	}
	ids, err := src.sessionIDs(ctx)
	if err != nil {
		return res, opErr(op, "", err)
	}
	w := &hermesWriter{s: s, res: &res}
	var done int64
	progress := func(n int64) {
		done += n
		if o.OnProgress != nil {
			o.OnProgress(done, total)
		}
	}
	progress(0)
	// A bulk load: the store indexes the messages in large transactions
	// and has caught up when it returns (store.BulkLoad).
	err = s.BulkLoad(ctx, func(ctx context.Context) error {
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return opErr(op, "", err)
			}
			if err := w.session(ctx, src, id, o.BatchMessages, progress); err != nil {
				return opErr(op, id, err)
			}
		}
		detached, err := s.LinkForeign(ctx, hermesOrigin, w.pending)
		res.Detached += detached
		return opErr(op, "", err)
	})
	if err != nil {
		return res, err
	}
	if err := w.meta(ctx, src); err != nil {
		return res, opErr(op, "", err)
	}
	for t := range src.cols {
		if hermesTablesRead[t] || strings.HasPrefix(t, "messages_fts") {
			continue
		}
		n, err := src.count(ctx, `SELECT COUNT(*) FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		if err != nil {
			return res, opErr(op, "", err)
		}
		tally(res.NotRepresentable).add("table "+t, n)
	}
	return res, nil
}

// hermesWriter is the write side of an import.
type hermesWriter struct {
	s   *store.Store
	res *Result
	// pending are children whose parent comes later in the source: they
	// are linked once every session is in.
	pending []store.ForeignLink
}

// session imports one source session, a batch of its messages per
// transaction.
func (w *hermesWriter) session(ctx context.Context, src *hermesSource, id string, batch int, progress func(int64)) error {
	row, err := src.session(ctx, id)
	if err != nil || row == nil {
		return err
	}
	nmsg, err := src.count(ctx, "SELECT COUNT(*) FROM messages WHERE session_id = ?", id)
	if err != nil {
		return err
	}
	fp, err := src.fingerprint(ctx, row)
	if err != nil {
		return err
	}
	state, err := w.s.ForeignSessionState(ctx, id)
	if err != nil {
		return err
	}
	exists := state.Exists
	switch {
	case exists && state.Origin != hermesOrigin:
		w.res.Skipped++
		progress(nmsg)
		return nil
	case exists && state.Fingerprint == fp:
		w.res.Unchanged++
		progress(nmsg)
		return nil
	}
	lost := tally{}
	var parentRow hermesRow
	if p := row.str("parent_session_id"); p != "" && p != id {
		if parentRow, err = src.session(ctx, p); err != nil {
			return err
		}
	}
	prompt := row.str("system_prompt")
	if prompt == "" && row.present("system_prompt_hash") {
		text, ok, err := src.prompt(ctx, row.str("system_prompt_hash"))
		if err != nil {
			return err
		}
		if ok {
			prompt = text
		} else {
			lost.add("sessions.system_prompt_hash(prompt missing)", 1)
		}
	}
	fs, err := mapHermesSession(row, prompt, parentRow, lost)
	if err != nil {
		w.res.Refused++
		tally(w.res.RefusedMessages).add("session refused: "+err.Error(), nmsg)
		progress(nmsg)
		return nil
	}
	var after int64
	for first := true; ; first = false {
		rows, err := src.messages(ctx, id, after, batch)
		if err != nil {
			return err
		}
		b := store.ForeignBatch{Origin: hermesOrigin, Session: fs, First: first, New: !exists,
			Last: len(rows) < batch, Fingerprint: fp}
		for _, r := range rows {
			after = r.int("id")
			m, err := mapHermesMessage(r, lost)
			if err != nil {
				tally(w.res.RefusedMessages).add(err.Error(), 1)
				continue
			}
			b.Messages = append(b.Messages, m)
		}
		if b.Last {
			urows, err := src.usage(ctx, id)
			if err != nil {
				return err
			}
			b.Usage = mapHermesUsage(urows, id, fs.Row.StartedAt, lost)
		}
		out, err := w.s.WriteForeignBatch(ctx, b)
		if err != nil {
			return err
		}
		if out.Skipped {
			w.res.Skipped++
			progress(nmsg)
			return nil
		}
		w.res.Messages += out.Messages
		w.res.Restated += out.Restated
		if b.Last {
			w.res.Usage += len(b.Usage)
		}
		if out.Untitled {
			w.res.Untitled++
		}
		if out.PendingLink {
			w.pending = append(w.pending, store.ForeignLink{Child: id, Parent: fs.Parent, Kind: fs.ParentKind})
		}
		progress(int64(len(rows)))
		if b.Last {
			break
		}
	}
	if exists {
		w.res.Updated++
	} else {
		w.res.Imported++
	}
	tally(w.res.NotRepresentable).merge(lost)
	return nil
}

// meta imports state_meta under "hermes/<key>"; Hermes's own keys are
// counted, not imported. Only a changed value is written.
func (w *hermesWriter) meta(ctx context.Context, src *hermesSource) error {
	if !src.has("state_meta") {
		return nil
	}
	rows, err := src.query(ctx, "SELECT key, value FROM state_meta ORDER BY key")
	if err != nil {
		return err
	}
	var written int
	for _, r := range rows {
		k, v := hermesMetaKey(r.str("key")), r.str("value")
		if k == "" || rules.CheckLabel("meta key", k) != nil || rules.CheckText("meta value", v) != nil {
			continue
		}
		old, err := w.s.Meta(ctx, k)
		if err == nil && old == v {
			continue
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := w.s.SetMeta(ctx, k, v); err != nil {
			return err
		}
		written++
	}
	w.res.Meta += written
	for _, r := range rows {
		k, v := hermesMetaKey(r.str("key")), r.str("value")
		if k == "" {
			tally(w.res.NotRepresentable).add("state_meta(Hermes's own keys)", 1)
		} else if rules.CheckLabel("meta key", k) != nil || rules.CheckText("meta value", v) != nil {
			tally(w.res.NotRepresentable).add("state_meta(invalid key or value)", 1)
		}
	}
	return nil
}

// opErr wraps err as a *store.Error for op, as its own verbs do, unless
// the store already named this op.
func opErr(op, sessionID string, err error) error {
	if err == nil {
		return nil
	}
	var already *store.Error
	if errors.As(err, &already) && already.Op == op {
		return err
	}
	return &store.Error{Op: op, SessionID: sessionID, Err: err}
}
