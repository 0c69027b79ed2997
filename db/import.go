package db

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sessiondb/sessiondb/db/gen"
)

// Import caps and limits.
const (
	defaultMaxRecordBytes        = 64 << 20
	defaultMaxMessagesPerSession = 1_000_000
	maxImportErrors              = 50
)

// ImportOptions bound an import.
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
	Imported int   // sessions written
	Skipped  int   // sessions whose id already existed (left as they are, rows and all)
	Detached int   // sessions imported without their parent link (parent absent, or the link would make a cycle)
	Messages int64 // messages written
	// Errors lists what was wrong with the file (at most 50). When there
	// are any, nothing was written.
	Errors []ImportError
}

// Import reads an export (see Export) and writes its sessions. It checks
// the whole file before writing anything: any malformed line, unknown
// record, bad value, message outside its session or over a cap fails the
// import with ErrInvalidInput and the list of problems in the result, and
// the store is untouched. Then each session is written with its rows in
// one transaction: a session whose id exists is skipped whole; a parent is
// linked when it exists (in the store or earlier in the file) and the link
// makes no cycle, else the session is imported detached. Memory stays
// bounded by one line (plus the ids of the file's sessions); input that
// cannot seek is spooled to a temporary file.
func (s *Store) Import(ctx context.Context, r io.Reader, o ImportOptions) (ImportResult, error) {
	const op = "import"
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = defaultMaxRecordBytes
	}
	if o.MaxMessagesPerSession <= 0 {
		o.MaxMessagesPerSession = defaultMaxMessagesPerSession
	}
	src, first, cleanup, err := spoolable(r)
	if err != nil {
		return ImportResult{}, opErr(op, "", err)
	}
	defer cleanup()
	var res ImportResult
	v := newImportValidator(o)
	if err := v.run(first); err != nil {
		return res, opErr(op, "", err)
	}
	size, err := src.size()
	if err != nil {
		return res, opErr(op, "", err)
	}
	if len(v.errs) > 0 {
		res.Errors = v.errs
		return res, opErr(op, "", fmt.Errorf("%w: %d problems in the file, nothing imported; first: %v",
			ErrInvalidInput, len(v.errs), v.errs[0]))
	}
	w := importWriter{s: s, src: src, maxLine: o.MaxRecordBytes, total: size, progress: o.OnProgress, res: &res}
	for _, b := range v.blocks {
		if err := w.block(ctx, b); err != nil {
			return res, opErr(op, b.id, err)
		}
	}
	if err := w.link(ctx); err != nil {
		return res, opErr(op, "", err)
	}
	return res, nil
}

// importSource is what an import reads twice: the caller's file, when it
// is a regular file, or a spool of the caller's stream.
type importSource struct {
	io.ReaderAt
	file *os.File // the spool, or the caller's file
	base int64    // where the caller's file was positioned
}

func (src *importSource) size() (int64, error) {
	fi, err := src.file.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size() - src.base, nil
}

// spoolable returns r as a ReaderAt for the second pass, and the reader of
// the first: a regular file is read in place (from its current position);
// anything else is copied to a temporary file during the first pass.
func spoolable(r io.Reader) (src *importSource, first io.Reader, cleanup func(), err error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if pos, err := f.Seek(0, io.SeekCurrent); err == nil {
				src := &importSource{ReaderAt: io.NewSectionReader(f, pos, fi.Size()-pos), file: f, base: pos}
				return src, io.NewSectionReader(f, pos, fi.Size()-pos), func() {}, nil
			}
		}
	}
	tmp, err := os.CreateTemp("", "sessiondb-import-*.jsonl")
	if err != nil {
		return nil, nil, nil, err
	}
	cleanup = func() { tmp.Close(); os.Remove(tmp.Name()) }
	return &importSource{ReaderAt: tmp, file: tmp}, io.TeeReader(r, tmp), cleanup, nil
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
	imported map[string]bool // sessions written by this import (origins resolve only into them)
	pending  []pendingLink
}

type pendingLink struct{ child, parent, kind string }

// block writes one session and its rows in one transaction; the callback
// re-reads the block from the source, so a replay after a lock error
// starts clean.
func (w *importWriter) block(ctx context.Context, b importBlock) error {
	if w.imported == nil {
		w.imported = map[string]bool{}
	}
	var skipped bool
	var messages int64
	var pend *pendingLink
	err := w.s.write(ctx, "import session", b.id, w.s.opts.TranscriptPatience, func(ctx context.Context, tx gen.DBTX) error {
		skipped, messages, pend = false, 0, nil
		lr := newLineReader(io.NewSectionReader(w.src, b.start, b.end-b.start), w.maxLine)
		for {
			line, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			typ, _ := recordType(line)
			switch typ {
			case "session":
				var rec sessionRecord
				if err := decodeStrict(line, &rec); err != nil {
					return err
				}
				if err := sessionMustExist(ctx, tx, rec.ID); err == nil {
					skipped = true
					return nil
				} else if !errors.Is(err, ErrNotFound) {
					return err
				}
				p := rec.importParams()
				if rec.ParentID != "" {
					if err := sessionMustExist(ctx, tx, rec.ParentID); err == nil {
						p.ParentSessionID, p.ParentKind = ptr(rec.ParentID), ptr(rec.Kind)
					} else if errors.Is(err, ErrNotFound) {
						pend = &pendingLink{child: rec.ID, parent: rec.ParentID, kind: rec.Kind}
					} else {
						return err
					}
				}
				if _, err := queries.SessionImport(ctx, tx, p); err != nil {
					return err
				}
			case "message":
				var rec messageRecord
				if err := decodeStrict(line, &rec); err != nil {
					return err
				}
				p := gen.MessageImportParams{SessionID: rec.SessionID, Role: rec.Role, Content: rec.Content,
					ToolName: ptr(rec.ToolName), ToolCallID: ptr(rec.ToolCallID), Reasoning: ptr(rec.Reasoning),
					FinishReason: ptr(rec.FinishReason), TokenCount: rec.TokenCount, State: rec.State,
					IsSummary: b2i(rec.Summary), IdempotencyKey: ptr(rec.IdempotencyKey), CreatedAt: rec.CreatedAt}
				if len(rec.ToolCalls) > 0 {
					p.ToolCallsJson = ptr(string(rec.ToolCalls))
				}
				if o := rec.Origin; o != nil && (o.SessionID == rec.SessionID || w.imported[o.SessionID]) {
					// Origins are rare (compression copies) and point backwards
					// into rows already written: look each one up.
					id, err := queries.MessageIDBySeq(ctx, tx, gen.MessageIDBySeqParams{SessionID: o.SessionID, SeqOffset: o.Seq - 1})
					if err == nil {
						p.OriginID = &id
					}
				}
				if err := queries.MessageImport(ctx, tx, p); err != nil {
					return err
				}
				messages++
			case "usage":
				var rec usageRecord
				if err := decodeStrict(line, &rec); err != nil {
					return err
				}
				if err := queries.ModelUsageImport(ctx, tx, gen.ModelUsageImportParams{SessionID: rec.SessionID,
					Model: rec.Model, Task: rec.Task, InputTokens: rec.InputTokens, OutputTokens: rec.OutputTokens,
					CacheReadTokens: rec.CacheReadTokens, CacheWriteTokens: rec.CacheWriteTokens,
					ReasoningTokens: rec.ReasoningTokens, ApiCallCount: rec.APICalls,
					EstimatedCostUsd: rec.EstimatedCostUSD, ActualCostUsd: rec.ActualCostUSD,
					FirstSeenAt: rec.FirstSeenAt, LastSeenAt: rec.LastSeenAt}); err != nil {
					return err
				}
			}
		}
		return queries.SessionRecount(ctx, tx, b.id)
	})
	if err != nil {
		return err
	}
	switch {
	case skipped:
		w.res.Skipped++
	default:
		w.res.Imported++
		w.res.Messages += messages
		w.imported[b.id] = true
		if pend != nil {
			w.pending = append(w.pending, *pend)
		}
	}
	if w.progress != nil {
		w.progress(b.end, w.total)
	}
	return nil
}

// link sets the parent links that could not be set when their child was
// written (the parent came later in the file), unless the parent is absent
// or the link would close a cycle.
func (w *importWriter) link(ctx context.Context) error {
	for _, p := range w.pending {
		linked := false
		err := w.s.write(ctx, "import link", p.child, w.s.opts.WritePatience, func(ctx context.Context, tx gen.DBTX) error {
			linked = false
			if err := sessionMustExist(ctx, tx, p.parent); errors.Is(err, ErrNotFound) {
				return nil
			} else if err != nil {
				return err
			}
			for cur, steps := p.parent, 0; steps < maxChainWalk; steps++ {
				if cur == p.child {
					return nil // the link would close a cycle
				}
				up, err := queries.SessionParentOf(ctx, tx, cur)
				if err != nil || up == nil {
					break
				}
				cur = *up
			}
			linked = true
			return queries.SessionLink(ctx, tx, gen.SessionLinkParams{ID: p.child, ParentID: &p.parent, ParentKind: ptr(p.kind)})
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
