package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/internal/searchtext"
	"github.com/sessiondb/sessiondb/store/driver"
)

// Import caps and limits.
const (
	defaultMaxRecordBytes        = 64 << 20
	defaultMaxMessagesPerSession = 1_000_000
	maxImportErrors              = 50
)

// ImportOptions bound an import.
//
// A session of the file whose id the store already has is topped up, not
// skipped, when the store's copy is exactly a beginning of the file's:
//
//   - the session has the same source, user and start, and
//   - its rows, in seq order, are the file's first N messages (N ≤ the
//     file's count), each the same message: role, content, tool name and
//     call id, idempotency key, creation time, state and summary flag.
//
// Then the file's messages after the N-th are appended (the counters are
// recomputed from the rows); with none after it the session is unchanged
// and nothing is written. Anything else — a row that differs, a store
// with more rows than the file — is a divergence: the session is skipped
// whole, never merged, and listed in ImportResult.Skips with the reason.
// This is what makes re-running a copy (export, then import) bring the
// destination up to date with a source that kept appending.
//
// A topped-up session keeps its session fields and its usage (token and
// cost counters, per-model usage rows) as the store has them: the file
// holds only the source's totals, not which part of them is new, so adding
// would count the earlier copy twice and overwriting would lose what the
// destination recorded itself.
type ImportOptions struct {
	// MaxRecordBytes caps one line (default 64 MiB: a 16 MiB message with
	// every byte escaped fits).
	MaxRecordBytes int
	// MaxMessagesPerSession caps one session's messages (default 1,000,000).
	MaxMessagesPerSession int64
	// OnProgress, when set, is called as the write pass advances, with the
	// bytes of the file written so far and its size.
	OnProgress func(done, total int64)
}

// ImportResult says what Import did.
type ImportResult struct {
	Imported int // sessions written
	// Skipped counts sessions whose id already existed and that were left
	// as they are, rows and all: unchanged (the store has all the file's
	// messages) or diverged (see Skips).
	Skipped  int
	ToppedUp int // sessions whose id already existed that the file extended (see ImportOptions)
	// Detached counts sessions imported without their parent link: the
	// parent is absent, the link would make a cycle, or the parent is an
	// existing session of the store the file may not attach to (see
	// Import).
	Detached int
	Untitled int   // sessions imported without their title: another session of the store has it
	Messages int64 // messages written (new sessions' and topped-up ones')
	// Skips lists the existing sessions left alone because the store's copy
	// is not a beginning of the file's, with the reason (at most 50;
	// unchanged sessions are not listed).
	Skips []ImportSkip
	// Errors lists what was wrong with the file (at most 50). When there
	// are any, nothing was written.
	Errors []ImportError
}

// Import reads an export (see Export) and writes its sessions. It checks
// the whole file before writing anything: any malformed line, unknown
// record, bad value, message outside its session or over a cap fails the
// import with ErrInvalidInput and the list of problems in the result, and
// the store is untouched. Then each session is written with its rows in
// one transaction: a session whose id exists is topped up when the store's
// copy is a beginning of the file's, else skipped whole (see
// ImportOptions); a parent is
// linked when this import wrote it (anywhere in the file) and the link
// makes no cycle, or when it is an existing session the file's own export
// could have come from (mayAdopt), else the session is imported detached
// — a file cannot make its session the continuation of a conversation
// already in the store; a title another
// session of the store already has is dropped (Untitled). Memory stays
// bounded by one line (plus the ids and titles of the file's sessions);
// the input is spooled to a private file beside the database, so what is
// written is exactly what was checked. The writes are a bulk load
// (BulkLoad): on SQLite the search index has caught up when Import
// returns.
func (s *Store) Import(ctx context.Context, r io.Reader, o ImportOptions) (ImportResult, error) {
	const op = "import"
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = defaultMaxRecordBytes
	}
	if o.MaxMessagesPerSession <= 0 {
		o.MaxMessagesPerSession = defaultMaxMessagesPerSession
	}
	// The file is read twice (check, then write). It is copied to a private
	// spool (in Options.SpoolDir) during the first pass, so the second
	// reads exactly the bytes that were checked, whatever happens to the
	// source.
	spool, err := os.CreateTemp(s.opts.SpoolDir, ".sessiondb-import-*.jsonl")
	if err != nil {
		return ImportResult{}, opErr(op, "", err)
	}
	defer func() { spool.Close(); os.Remove(spool.Name()) }()
	var res ImportResult
	v := newImportValidator(o, s.MaxMessageBytes())
	if err := v.run(io.TeeReader(r, spool)); err != nil {
		return res, opErr(op, "", err)
	}
	fi, err := spool.Stat()
	if err != nil {
		return res, opErr(op, "", err)
	}
	size := fi.Size()
	if len(v.errs) > 0 {
		res.Errors = v.errs
		problems := fmt.Sprintf("%d problems", len(v.errs))
		if len(v.errs) == 1 {
			problems = "1 problem"
		}
		return res, opErr(op, "", fmt.Errorf("%w: %s in the file, nothing imported; first: %v",
			ErrInvalidInput, problems, v.errs[0]))
	}
	w := importWriter{s: s, src: spool, maxLine: o.MaxRecordBytes, total: size, progress: o.OnProgress, res: &res}
	err = s.BulkLoad(ctx, func(ctx context.Context) error {
		for _, b := range v.blocks {
			if err := w.block(ctx, b); err != nil {
				return opErr(op, b.id, err)
			}
		}
		return opErr(op, "", w.link(ctx))
	})
	return res, err
}

// importBlock is one session's lines in the source: [start, end).
type importBlock struct {
	id         string
	start, end int64
}

// importWriter is the write pass.
type importWriter struct {
	s        *Store
	src      io.ReaderAt
	maxLine  int
	total    int64
	progress func(done, total int64)
	res      *ImportResult
	imported map[string]bool // sessions written by this import
	// fileRows are the sessions whose rows are the file's: written,
	// topped up or unchanged by this import (origins resolve only into them).
	fileRows map[string]bool
	pending  []pendingLink
	origins  []pendingOrigin
}

type pendingLink struct {
	child, parent, kind string
	started             int64 // the child's start
}

// pendingOrigin is a copy whose origin's session comes later in the file.
type pendingOrigin struct {
	id  int64 // the copy
	ref messageRef
}

// block writes one session and its rows in one transaction; the callback
// re-reads the block from the source, so a replay after a lock error
// starts clean.
func (w *importWriter) block(ctx context.Context, b importBlock) error {
	if w.imported == nil {
		w.imported, w.fileRows = map[string]bool{}, map[string]bool{}
	}
	var untitled, detached bool
	var skip string // why an existing session is left alone
	var messages int64
	var pend *pendingLink
	var origins []pendingOrigin
	var tu *topUp // the store's rows of an existing session
	err := w.s.write(ctx, "import session", b.id, w.s.opts.TranscriptPatience, func(ctx context.Context, tx driver.Executor) error {
		untitled, detached, skip, messages, pend, origins, tu = false, false, "", 0, nil, nil, nil
		var batch importBatch // the session's new rows, written importBatchRows at a time
		lr := newLineReader(io.NewSectionReader(w.src, b.start, b.end-b.start), w.maxLine)
		for {
			line, err := lr.next()
			if errors.Is(err, io.EOF) {
				if err := batch.flush(ctx, tx); err != nil {
					return err
				}
				break
			}
			if err != nil {
				return err
			}
			var msg messageRecord // a message line's, decoded once when it can be (decodeMessage)
			decoded := decodeMessage(line, &msg)
			typ := "message"
			if !decoded {
				typ, _ = recordType(line)
			}
			switch typ {
			case "session":
				var rec sessionRecord
				if err := decodeStrict(line, &rec); err != nil {
					return err
				}
				if row, err := tx.SessionGet(ctx, rec.ID); err == nil {
					if skip = sameSession(row, rec); skip != "" {
						return nil
					}
					tu = &topUp{tx: tx, session: rec.ID}
					continue
				} else if !errors.Is(err, ErrNotFound) {
					return err
				}
				p := rec.importParams()
				if p.Title != nil {
					if _, err := tx.SessionTitleOwner(ctx, driver.SessionTitleOwnerParams{Title: p.Title, UserID: p.UserID}); err == nil {
						p.Title, p.TitleRank, untitled = nil, int64(TitleDerived), true
					} else if !errors.Is(err, ErrNotFound) {
						return err
					}
				}
				if rec.ParentID != "" {
					link, err := w.mayLink(ctx, tx, rec.ParentID, rec.Kind, rec.StartedAt)
					switch {
					case errors.Is(err, ErrNotFound): // it may come later in the file
						pend = &pendingLink{child: rec.ID, parent: rec.ParentID, kind: rec.Kind, started: rec.StartedAt}
					case err != nil:
						return err
					case link:
						p.ParentSessionID, p.ParentKind = rules.Ptr(rec.ParentID), rules.Ptr(rec.Kind)
					default:
						detached = true
					}
				}
				if _, err := tx.SessionImport(ctx, p); err != nil {
					return err
				}
			case "message":
				rec := msg
				if !decoded {
					if err := decodeStrict(line, &rec); err != nil {
						return err
					}
				}
				if err := rec.normalize(); err != nil {
					return err
				}
				if tu != nil {
					m, ok, err := tu.next(ctx)
					if err != nil {
						return err
					}
					if ok {
						// Still within the store's rows: nothing is written
						// before they all match.
						if skip = sameImportedMessage(m, rec); skip != "" {
							skip = fmt.Sprintf("message %d: %s", rec.Seq, skip)
							return nil
						}
						tu.rows++
						continue
					}
				}
				p := driver.MessageImportParams{SessionID: rec.SessionID, Role: rec.Role, Content: rec.Content,
					ToolName: rules.Ptr(rec.ToolName), ToolCallID: rules.Ptr(rec.ToolCallID), Reasoning: rules.Ptr(rec.Reasoning),
					FinishReason: rules.Ptr(rec.FinishReason), TokenCount: rec.TokenCount, State: rec.State,
					IsSummary: rules.B2I(rec.Summary), IdempotencyKey: rules.Ptr(rec.IdempotencyKey), CreatedAt: rec.CreatedAt,
					ReasoningDetails: rules.Ptr(rec.ReasoningDetails), Model: rules.Ptr(rec.Model),
					PlatformMessageID: rules.Ptr(rec.PlatformMessageID), MetadataJson: rules.Ptr(rec.Metadata),
					Observed: rules.B2I(rec.Observed), EffectDisposition: rules.Ptr(rec.EffectDisposition),
					ReasoningContent: rules.Ptr(rec.ReasoningContent),
					DisplayKind:      rules.Ptr(rec.DisplayKind), Uid: rules.Ptr(orDefault(rec.UID, newUID())),
					CallUid:     rules.Ptr(rec.CallUID),
					ToolEndedAt: rec.ToolEndedAt, ToolDurationMs: rec.ToolDurationMs}
				if len(rec.ToolCalls) > 0 {
					p.ToolCallsJson = rules.Ptr(string(rec.ToolCalls))
					p.ToolText = searchtext.ToolText(string(rec.ToolCalls))
				}
				if p.PartsJson, err = rec.partsJSON(); err != nil {
					return err
				}
				var originID *int64
				if o := rec.Origin; o != nil && (o.SessionID == rec.SessionID || w.fileRows[o.SessionID]) {
					// Origins are rare (compression copies) and point backwards
					// into rows already written: look each one up (this
					// session's batch written first).
					if err := batch.flush(ctx, tx); err != nil {
						return err
					}
					id, err := tx.MessageIDBySeq(ctx, driver.MessageIDBySeqParams{SessionID: o.SessionID, SeqOffset: o.Seq - 1})
					if err == nil {
						originID = &id
					}
				}
				p.OriginID = originID
				messages++
				if o := rec.Origin; o == nil || originID != nil || o.SessionID == rec.SessionID {
					if err := batch.add(ctx, tx, p); err != nil {
						return err
					}
					continue
				}
				// Its origin's session may come later: the row's id is kept to
				// link it then, so it is written alone, in its place.
				if err := batch.flush(ctx, tx); err != nil {
					return err
				}
				id, err := tx.MessageImport(ctx, p)
				if err != nil {
					return err
				}
				origins = append(origins, pendingOrigin{id: id, ref: *rec.Origin})
			case "usage":
				if tu != nil {
					continue // a topped-up session keeps its usage (see ImportOptions)
				}
				var rec usageRecord
				if err := decodeStrict(line, &rec); err != nil {
					return err
				}
				if err := tx.ModelUsageImport(ctx, driver.ModelUsageImportParams{SessionID: rec.SessionID,
					Model: rec.Model, Task: rec.Task, InputTokens: rec.InputTokens, OutputTokens: rec.OutputTokens,
					CacheReadTokens: rec.CacheReadTokens, CacheWriteTokens: rec.CacheWriteTokens,
					ReasoningTokens: rec.ReasoningTokens, ApiCallCount: rec.APICalls,
					EstimatedCostUsd: rec.EstimatedCostUSD, ActualCostUsd: rec.ActualCostUSD,
					FirstSeenAt: rec.FirstSeenAt, LastSeenAt: rec.LastSeenAt,
					BillingProvider: rec.BillingProvider, BillingBaseUrl: rec.BillingBaseURL, BillingMode: rec.BillingMode,
					CostStatus: rules.Ptr(rec.CostStatus), CostSource: rules.Ptr(rec.CostSource)}); err != nil {
					return err
				}
			}
		}
		if tu != nil {
			if _, more, err := tu.next(ctx); err != nil {
				return err
			} else if more {
				skip = fmt.Sprintf("the store has more messages than the file's %d", tu.rows)
				return nil
			}
			if messages == 0 {
				return nil // unchanged: nothing to write
			}
		}
		if err := tx.SessionBumpDisplayRevision(ctx, b.id); err != nil {
			return err
		}
		if err := tx.SessionRecount(ctx, b.id); err != nil {
			return err
		}
		return recomputeConversationActivity(ctx, tx, b.id) // a linked continuation folds in its parent's
	})
	if err != nil {
		return err
	}
	switch {
	case skip != "":
		w.res.Skipped++
		if len(w.res.Skips) < maxImportSkips {
			w.res.Skips = append(w.res.Skips, ImportSkip{SessionID: b.id, Reason: skip})
		}
	case tu != nil:
		w.fileRows[b.id] = true
		w.origins = append(w.origins, origins...)
		if messages == 0 {
			w.res.Skipped++
			break
		}
		w.res.ToppedUp++
		w.res.Messages += messages
	default:
		w.res.Imported++
		w.res.Messages += messages
		w.imported[b.id] = true
		w.fileRows[b.id] = true
		if detached {
			w.res.Detached++
		}
		if pend != nil {
			w.pending = append(w.pending, *pend)
		}
		w.origins = append(w.origins, origins...)
		if untitled {
			w.res.Untitled++
		}
	}
	if w.progress != nil {
		w.progress(b.end, w.total)
	}
	return nil
}

// link sets the parent links that could not be set when their child was
// written (the parent came later in the file), unless the parent is absent
// or the link would close a cycle; then the origins of copies whose
// original's session came later (an origin in a session the import did not
// write is dropped: its rows are not the file's).
func (w *importWriter) link(ctx context.Context) error {
	if err := w.linkOrigins(ctx); err != nil {
		return err
	}
	for _, p := range w.pending {
		linked := false
		err := w.s.write(ctx, "import link", p.child, w.s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
			linked = false
			if ok, err := w.mayLink(ctx, tx, p.parent, p.kind, p.started); errors.Is(err, ErrNotFound) || (err == nil && !ok) {
				return nil
			} else if err != nil {
				return err
			}
			for cur, steps := p.parent, 0; steps < maxChainWalk; steps++ {
				if cur == p.child {
					return nil // the link would close a cycle
				}
				up, err := tx.SessionParentOf(ctx, cur)
				if err != nil || up == nil {
					break
				}
				cur = *up
			}
			linked = true
			if err := tx.SessionLink(ctx, driver.SessionLinkParams{ID: p.child, ParentID: &p.parent, ParentKind: rules.Ptr(p.kind)}); err != nil {
				return err
			}
			return recomputeConversationActivity(ctx, tx, p.child)
		})
		if err != nil {
			return err
		}
		if !linked {
			w.res.Detached++
		}
	}
	return nil
}

func (w *importWriter) linkOrigins(ctx context.Context) error {
	for _, o := range w.origins {
		if !w.fileRows[o.ref.SessionID] {
			continue
		}
		err := w.s.write(ctx, "import origin", o.ref.SessionID, w.s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
			id, err := tx.MessageIDBySeq(ctx, driver.MessageIDBySeqParams{SessionID: o.ref.SessionID, SeqOffset: o.ref.Seq - 1})
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			return tx.MessageSetOrigin(ctx, driver.MessageSetOriginParams{ID: o.id, OriginID: &id})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// mayLink decides whether an imported child may be linked to parent:
// always when this import wrote the parent (the file's own structure);
// when the parent is an existing session of the store, only as mayAdopt
// allows. ErrNotFound: no such session (yet).
func (w *importWriter) mayLink(ctx context.Context, tx driver.Executor, parent, kind string, started int64) (bool, error) {
	if w.imported[parent] {
		return true, nil
	}
	row, err := tx.SessionGet(ctx, parent)
	if errors.Is(err, ErrNotFound) {
		return false, ErrNotFound
	}
	if err != nil {
		return false, err
	}
	return mayAdopt(ctx, tx, row, kind, started)
}

// mayAdopt says whether a session the import did not write may take an
// imported child: only when the file's own export could have produced the
// pair — the child is a compression continuation (kind compression), the
// parent was closed by a compression (end_reason compression, ended no
// later than the child started), and the parent has no continuation in
// the store (the exported child is what was there). Anything else — a
// live conversation, a parent already continued, a branch, delegate,
// reset or tool child of someone else's session — would let a shared file
// make its session part of a conversation it does not belong to (the
// compression tip, whose summary shows in the lineage), so the child is
// imported detached.
func mayAdopt(ctx context.Context, tx driver.Executor, parent driver.Session, kind string, started int64) (bool, error) {
	if !ChildKind(kind).Continues() || rules.Str(parent.EndReason) != "compression" ||
		parent.EndedAt == nil || *parent.EndedAt > started {
		return false, nil
	}
	_, err := tx.SessionContinuation(ctx, &parent.ID)
	if errors.Is(err, ErrNotFound) {
		return true, nil
	}
	return false, err
}

// importBatchRows bounds the rows an import holds before writing them.
const importBatchRows = 1000

// importBatch holds a session's imported rows until importBatchRows are
// there or something must read them, then writes them in order in one go
// where the engine can (driver.MessageImportBatcher: PostgreSQL's COPY),
// else one MessageImport each. Nothing else changes: the rows go into the
// same transaction, in the same order, before anything reads them.
type importBatch []driver.MessageImportParams

func (b *importBatch) add(ctx context.Context, tx driver.Executor, p driver.MessageImportParams) error {
	*b = append(*b, p)
	if len(*b) < importBatchRows {
		return nil
	}
	return b.flush(ctx, tx)
}

func (b *importBatch) flush(ctx context.Context, tx driver.Executor) error {
	rows := *b
	*b = rows[:0]
	if len(rows) == 0 {
		return nil
	}
	if bulk, ok := tx.(driver.MessageImportBatcher); ok {
		return bulk.MessageImportBatch(ctx, rows)
	}
	for _, p := range rows {
		if _, err := tx.MessageImport(ctx, p); err != nil {
			return err
		}
	}
	return nil
}
