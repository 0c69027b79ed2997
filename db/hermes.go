package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/internal/rules"
)

// hermesOrigin names Hermes in imported_sessions.
const hermesOrigin = "hermes"

// defaultHermesBatch is how many source messages one import transaction
// writes: large enough that a 100k-message file commits a hundred times,
// not a hundred thousand; small enough that other writers get the lock.
const defaultHermesBatch = 1000

// HermesImportOptions tune ImportHermes.
type HermesImportOptions struct {
	// OnProgress, when set, is called as the import advances, with the
	// source messages dealt with so far and the source's total.
	OnProgress func(done, total int64)
	// BatchMessages caps the source messages written per transaction
	// (default 1000).
	BatchMessages int
}

// HermesImportResult says what ImportHermes did. Every source session is
// counted once, in Imported, Updated, Unchanged, Skipped or Refused.
type HermesImportResult struct {
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
func (r HermesImportResult) NothingNew() bool {
	return r.Imported == 0 && r.Updated == 0 && r.Messages == 0 && r.Restated == 0 && r.Meta == 0
}

// ImportHermes imports a Hermes state.db (the Python store sessiondb
// succeeds) at path: every session with its messages, lineage, titles,
// flags, handoff, usage and meta. The file is opened read-only and read in
// one snapshot, so a Hermes process may go on using it: nothing is written
// to it, its WAL is read and never checkpointed.
//
// The import is idempotent. Each message is keyed by its source row id, and
// each imported session remembers a fingerprint of its source: a second
// run writes nothing (NothingNew), and a run after Hermes wrote more brings
// only what is new — new sessions, new messages, changed message states, a
// session's end and grown usage. A session whose id the store already uses
// for one of its own is skipped whole. Work is committed in batches, so a
// run stopped half-way (a crash, ctx) resumes where it left off when run
// again.
//
// Hermes's Unix-second timestamps become milliseconds. A child's kind
// follows Hermes's rules (compression continuations, delegates for
// sub-agents, branches, resets, tool sessions). A platform message id is
// unique per session in sessiondb while Hermes may repeat one: the first
// row keeps it, a later row keeps it in its Metadata under
// "duplicate_platform_message_id" (as migration 9 does to older files).
// What sessiondb cannot hold is counted in the result, never dropped
// silently.
func (s *Store) ImportHermes(ctx context.Context, path string, o HermesImportOptions) (HermesImportResult, error) {
	const op = "import hermes"
	res := HermesImportResult{Source: path, NotRepresentable: map[string]int64{}, RefusedMessages: map[string]int64{}}
	if s.closed.Load() {
		return res, opErr(op, "", ErrClosed)
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
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return res, opErr(op, "", err)
		}
		if err := w.session(ctx, src, id, o.BatchMessages, progress); err != nil {
			return res, opErr(op, id, err)
		}
	}
	if err := w.linkPending(ctx); err != nil {
		return res, opErr(op, "", err)
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

// hermesLink is a child whose parent comes later in the import: it is
// linked once every session is in.
type hermesLink struct {
	child, parent, kind string
	started             int64 // the child's start
}

// hermesChainWalk bounds the walk up a parent chain (a cycle in the
// source would otherwise never end).
const hermesChainWalk = 1000

// hermesWriter is the write side of an import.
type hermesWriter struct {
	s       *Store
	res     *HermesImportResult
	pending []hermesLink
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
	var state gen.ImportedSessionGetRow
	exists := false
	err = w.s.read(ctx, "import hermes", id, func(q gen.DBTX) error {
		n, err := queries.SessionExists(ctx, q, id)
		if err != nil || n == 0 {
			return err
		}
		exists = true
		state, err = queries.ImportedSessionGet(ctx, q, id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
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
		u := hermesUnit{s: fs, first: first, isNew: !exists, last: len(rows) < batch, fingerprint: fp}
		for _, r := range rows {
			after = r.int("id")
			m, err := mapHermesMessage(r, lost)
			if err != nil {
				tally(w.res.RefusedMessages).add(err.Error(), 1)
				continue
			}
			u.msgs = append(u.msgs, m)
		}
		if u.last {
			urows, err := src.usage(ctx, id)
			if err != nil {
				return err
			}
			u.usage = mapHermesUsage(urows, id, fs.p.StartedAt, lost)
		}
		if err := w.write(ctx, &u); err != nil {
			return err
		}
		if u.skipped {
			w.res.Skipped++
			progress(nmsg)
			return nil
		}
		progress(int64(len(rows)))
		if u.last {
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

// hermesUnit is what one transaction writes: a session (on its first
// unit), a batch of its messages, and (on its last) usage and the
// fingerprint that marks the session complete.
type hermesUnit struct {
	s                  foreignSession
	first, last, isNew bool
	fingerprint        string
	msgs               []foreignMessage
	usage              []gen.ForeignModelUsagePutParams
	// skipped: the id was taken by another writer since it was checked.
	skipped bool
}

func (w *hermesWriter) write(ctx context.Context, u *hermesUnit) error {
	id := u.s.p.ID
	var messages, restated int64
	var untitled, pending bool
	err := w.s.write(ctx, "import hermes session", id, w.s.opts.TranscriptPatience, func(ctx context.Context, tx gen.DBTX) error {
		messages, restated, untitled, pending, u.skipped = 0, 0, false, false, false // fresh on every (re)play
		at := now()
		if u.first && u.isNew {
			p := u.s.p
			if p.Title != nil {
				owner, err := queries.SessionTitleOwner(ctx, tx, gen.SessionTitleOwnerParams{Title: p.Title, UserID: p.UserID})
				switch {
				case err == nil && owner.ID != id:
					p.Title, p.TitleRank, untitled = nil, int64(TitleDerived), true
				case err != nil && !errors.Is(err, sql.ErrNoRows):
					return err
				}
			}
			if u.s.parent != "" {
				ok, err := hermesLinkable(ctx, tx, id, u.s.parent)
				if err != nil {
					return err
				}
				if ok {
					p.ParentSessionID, p.ParentKind = &u.s.parent, rules.Ptr(u.s.parentKind)
				} else {
					pending = true
				}
			}
			n, err := queries.ForeignSessionInsert(ctx, tx, p)
			if err != nil {
				return err
			}
			if n == 0 {
				u.skipped = true
				return nil
			}
			if err := queries.ImportedSessionPut(ctx, tx, gen.ImportedSessionPutParams{
				SessionID: id, Origin: hermesOrigin, Fingerprint: "", At: at}); err != nil {
				return err
			}
		} else if u.first {
			p := u.s.p
			if u.s.parent != "" {
				// A run stopped before it linked a child whose parent came
				// later: the link is tried again.
				up, err := queries.SessionParentOf(ctx, tx, id)
				if err != nil {
					return err
				}
				pending = up == nil
			}
			if err := queries.ForeignSessionRefresh(ctx, tx, gen.ForeignSessionRefreshParams{
				ID: id, EndedAt: p.EndedAt, EndReason: p.EndReason, InputTokens: p.InputTokens,
				OutputTokens: p.OutputTokens, CacheReadTokens: p.CacheReadTokens,
				CacheWriteTokens: p.CacheWriteTokens, ReasoningTokens: p.ReasoningTokens,
				ApiCallCount: p.ApiCallCount, EstimatedCostUsd: p.EstimatedCostUsd,
				ActualCostUsd: p.ActualCostUsd, RewindCount: p.RewindCount}); err != nil {
				return err
			}
		}
		for _, m := range u.msgs {
			key := m.p.IdempotencyKey
			st, err := queries.MessageStateByKey(ctx, tx, gen.MessageStateByKeyParams{SessionID: id, IdempotencyKey: key})
			if err == nil {
				if st.State != m.p.State {
					if err := queries.MessageSetState(ctx, tx, gen.MessageSetStateParams{ID: st.ID, State: m.p.State}); err != nil {
						return err
					}
					restated++
				}
				continue
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			p := m.p
			p.SessionID = id
			if p.PlatformMessageID != nil {
				_, err := queries.MessageIDByPlatformID(ctx, tx, gen.MessageIDByPlatformIDParams{
					SessionID: id, PlatformMessageID: p.PlatformMessageID})
				switch {
				case err == nil: // an earlier row holds it: this one keeps it in its metadata
					p.MetadataJson, p.PlatformMessageID = rules.Ptr(duplicatePlatformIDMetadata(*p.PlatformMessageID)), nil
				case !errors.Is(err, sql.ErrNoRows):
					return err
				}
			}
			if _, err := queries.ForeignMessageInsert(ctx, tx, p); err != nil {
				return err
			}
			messages++
		}
		if !u.last {
			return nil
		}
		for _, up := range u.usage {
			if err := queries.ForeignModelUsagePut(ctx, tx, up); err != nil {
				return err
			}
		}
		if err := queries.SessionRecount(ctx, tx, id); err != nil {
			return err
		}
		return queries.ImportedSessionPut(ctx, tx, gen.ImportedSessionPutParams{
			SessionID: id, Origin: hermesOrigin, Fingerprint: u.fingerprint, At: at})
	})
	if err != nil || u.skipped {
		return err
	}
	w.res.Messages += messages
	w.res.Restated += restated
	if u.last {
		w.res.Usage += len(u.usage)
	}
	if untitled {
		w.res.Untitled++
	}
	if pending {
		w.pending = append(w.pending, hermesLink{child: id, parent: u.s.parent, kind: u.s.parentKind})
	}
	return nil
}

// hermesLinkable reports whether child may be linked under parent: the
// parent is a session imported from Hermes (never one of the store's own
// that happens to share the id) and the link makes no cycle.
func hermesLinkable(ctx context.Context, tx gen.DBTX, child, parent string) (bool, error) {
	st, err := queries.ImportedSessionGet(ctx, tx, parent)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil || st.Origin != hermesOrigin {
		return false, err
	}
	cur := parent
	for range hermesChainWalk {
		if cur == child {
			return false, nil
		}
		up, err := queries.SessionParentOf(ctx, tx, cur)
		if errors.Is(err, sql.ErrNoRows) || up == nil {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		cur = *up
	}
	return false, nil
}

// linkPending links the children whose parent came later in the source.
func (w *hermesWriter) linkPending(ctx context.Context) error {
	if len(w.pending) == 0 {
		return nil
	}
	var detached int
	err := w.s.write(ctx, "import hermes links", "", w.s.opts.WritePatience, func(ctx context.Context, tx gen.DBTX) error {
		detached = 0
		for _, l := range w.pending {
			ok, err := hermesLinkable(ctx, tx, l.child, l.parent)
			if err != nil {
				return err
			}
			if !ok {
				detached++
				continue
			}
			if err := queries.SessionLink(ctx, tx, gen.SessionLinkParams{
				ID: l.child, ParentID: &l.parent, ParentKind: rules.Ptr(l.kind)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		w.res.Detached += detached
	}
	return err
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
	err = w.s.write(ctx, "import hermes meta", "", w.s.opts.WritePatience, func(ctx context.Context, tx gen.DBTX) error {
		written = 0
		for _, r := range rows {
			k, v := hermesMetaKey(r.str("key")), r.str("value")
			if k == "" || rules.CheckLabel("meta key", k) != nil || rules.CheckText("meta value", v) != nil {
				continue
			}
			old, err := queries.MetaGet(ctx, tx, k)
			if err == nil && old == v {
				continue
			}
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if err := queries.MetaUpsert(ctx, tx, gen.MetaUpsertParams{Key: k, Value: v, UpdatedAt: now()}); err != nil {
				return err
			}
			written++
		}
		return nil
	})
	if err != nil {
		return err
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
