package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// The write side of importing another program's store (package hermes
// reads a Hermes state.db): the importer maps the source's rows, the store
// writes them with the domain's rules — on every engine the same.
//
// The row types are the engine seam's, so an importer carries every column
// sessiondb keeps without a copy of each; like package driver they are for
// importers inside this repository and may change in any release.
type (
	// ForeignSessionRow is a source session as sessiondb keeps it.
	ForeignSessionRow = driver.ForeignSessionInsertParams
	// ForeignMessage is a source message; its IdempotencyKey names the
	// source row, so a second import finds it.
	ForeignMessage = driver.ForeignMessageInsertParams
	// ForeignUsage is a source (model, task) usage row: its totals.
	ForeignUsage = driver.ForeignModelUsagePutParams
)

// ForeignSession is a mapped source session and its parent link, which is
// made once the parent is in the store.
type ForeignSession struct {
	Row        ForeignSessionRow
	Parent     string
	ParentKind ChildKind
}

// ForeignState is what the store holds of a session id an import meets.
type ForeignState struct {
	Exists      bool   // a session has the id
	Origin      string // the store it was imported from ("" for the store's own)
	Fingerprint string // the source's summary at the last complete import ("" while incomplete)
}

// ForeignSessionState says whether id is taken and, when it was imported,
// from where and with what fingerprint.
func (s *Store) ForeignSessionState(ctx context.Context, id string) (ForeignState, error) {
	var st ForeignState
	err := s.read(ctx, "import", id, func(q driver.Executor) error {
		st = ForeignState{}
		n, err := q.SessionExists(ctx, id)
		if err != nil || n == 0 {
			return err
		}
		st.Exists = true
		row, err := q.ImportedSessionGet(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		st.Origin, st.Fingerprint = row.Origin, row.Fingerprint
		return err
	})
	return st, err
}

// ForeignBatch is what one import transaction writes: the session (on its
// first batch), a batch of its messages, and on its last batch its usage
// and the fingerprint that marks the session complete.
type ForeignBatch struct {
	Origin      string // the source store's name, kept in imported_sessions
	Session     ForeignSession
	First, Last bool
	New         bool // the session is not in the store yet
	Fingerprint string
	Messages    []ForeignMessage
	Usage       []ForeignUsage
}

// ForeignBatchResult says what WriteForeignBatch did.
type ForeignBatchResult struct {
	// Skipped: another writer took the id since ForeignSessionState looked;
	// nothing was written.
	Skipped  bool
	Messages int64 // messages written
	Restated int64 // messages whose state changed in the source, updated
	Untitled bool  // the title was dropped: another session holds it
	// PendingLink: the parent is not in the store yet; LinkForeign links it.
	PendingLink bool
}

// foreignChainWalk bounds the walk up a parent chain (a cycle in the
// source would otherwise never end).
const foreignChainWalk = 1000

// WriteForeignBatch writes one batch in one transaction. A message already
// imported (its key is there) only takes the source's new state; a new
// message whose platform id an earlier row of the session holds keeps it
// in its metadata under "duplicate_platform_message_id", as migration 9
// does to older files. A title another session holds is dropped.
func (s *Store) WriteForeignBatch(ctx context.Context, b ForeignBatch) (ForeignBatchResult, error) {
	id := b.Session.Row.ID
	var res ForeignBatchResult
	err := s.write(ctx, "import "+b.Origin+" session", id, s.opts.TranscriptPatience, func(ctx context.Context, tx driver.Executor) error {
		res = ForeignBatchResult{} // fresh on every (re)play
		at := now()
		if b.First && b.New {
			p := b.Session.Row
			if p.Title != nil {
				owner, err := tx.SessionTitleOwner(ctx, driver.SessionTitleOwnerParams{Title: p.Title, UserID: p.UserID})
				switch {
				case err == nil && owner.ID != id:
					p.Title, p.TitleRank, res.Untitled = nil, int64(TitleDerived), true
				case err != nil && !errors.Is(err, ErrNotFound):
					return err
				}
			}
			if b.Session.Parent != "" {
				ok, err := foreignLinkable(ctx, tx, b.Origin, id, b.Session.Parent)
				if err != nil {
					return err
				}
				if ok {
					p.ParentSessionID, p.ParentKind = &b.Session.Parent, rules.Ptr(string(b.Session.ParentKind))
				} else {
					res.PendingLink = true
				}
			}
			n, err := tx.ForeignSessionInsert(ctx, p)
			if err != nil {
				return err
			}
			if n == 0 {
				res.Skipped = true
				return nil
			}
			if err := tx.ImportedSessionPut(ctx, driver.ImportedSessionPutParams{
				SessionID: id, Origin: b.Origin, Fingerprint: "", At: at}); err != nil {
				return err
			}
		} else if b.First {
			p := b.Session.Row
			if b.Session.Parent != "" {
				// A run stopped before it linked a child whose parent came
				// later: the link is tried again.
				up, err := tx.SessionParentOf(ctx, id)
				if err != nil {
					return err
				}
				res.PendingLink = up == nil
			}
			if err := tx.ForeignSessionRefresh(ctx, driver.ForeignSessionRefreshParams{
				ID: id, EndedAt: p.EndedAt, EndReason: p.EndReason, InputTokens: p.InputTokens,
				OutputTokens: p.OutputTokens, CacheReadTokens: p.CacheReadTokens,
				CacheWriteTokens: p.CacheWriteTokens, ReasoningTokens: p.ReasoningTokens,
				ApiCallCount: p.ApiCallCount, EstimatedCostUsd: p.EstimatedCostUsd,
				ActualCostUsd: p.ActualCostUsd, RewindCount: p.RewindCount}); err != nil {
				return err
			}
		}
		if err := writeForeignMessages(ctx, tx, id, b.Messages, &res); err != nil {
			return err
		}
		if !b.Last {
			return nil
		}
		for _, u := range b.Usage {
			if err := tx.ForeignModelUsagePut(ctx, u); err != nil {
				return err
			}
		}
		if err := tx.SessionBumpDisplayRevision(ctx, id); err != nil {
			return err
		}
		if err := tx.SessionRecount(ctx, id); err != nil {
			return err
		}
		if err := recomputeConversationActivity(ctx, tx, id); err != nil {
			return err
		}
		return tx.ImportedSessionPut(ctx, driver.ImportedSessionPutParams{
			SessionID: id, Origin: b.Origin, Fingerprint: b.Fingerprint, At: at})
	})
	return res, err
}

// ForeignLink is a child whose parent came later in the source.
type ForeignLink struct {
	Child, Parent string
	Kind          ChildKind
}

// LinkForeign links the children whose parent came later in the source,
// in one transaction, and returns how many stay detached (the parent is
// absent, was not imported from origin, or the link would make a cycle).
func (s *Store) LinkForeign(ctx context.Context, origin string, links []ForeignLink) (detached int, err error) {
	if len(links) == 0 {
		return 0, nil
	}
	err = s.write(ctx, "import "+origin+" links", "", s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		detached = 0
		for _, l := range links {
			ok, err := foreignLinkable(ctx, tx, origin, l.Child, l.Parent)
			if err != nil {
				return err
			}
			if !ok {
				detached++
				continue
			}
			if err := tx.SessionLink(ctx, driver.SessionLinkParams{
				ID: l.Child, ParentID: &l.Parent, ParentKind: rules.Ptr(string(l.Kind))}); err != nil {
				return err
			}
			if err := recomputeConversationActivity(ctx, tx, l.Child); err != nil {
				return err
			}
		}
		return nil
	})
	return detached, err
}

// foreignLinkable reports whether child may be linked under parent: the
// parent was imported from the same origin (never one of the store's own
// that happens to share the id) and the link makes no cycle.
func foreignLinkable(ctx context.Context, tx driver.Executor, origin, child, parent string) (bool, error) {
	st, err := tx.ImportedSessionGet(ctx, parent)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil || st.Origin != origin {
		return false, err
	}
	cur := parent
	for range foreignChainWalk {
		if cur == child {
			return false, nil
		}
		up, err := tx.SessionParentOf(ctx, cur)
		if errors.Is(err, ErrNotFound) || up == nil {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		cur = *up
	}
	return false, nil
}

// duplicatePlatformIDKey is the metadata key under which a message keeps a
// platform message id an earlier message of its session already holds.
const duplicatePlatformIDKey = "duplicate_platform_message_id"

// duplicatePlatformIDMetadata is the metadata of a row whose platform id
// an earlier row holds, as migration 9's json_object writes it: no space,
// no HTML escaping (the bytes differ only where Go escapes U+2028 and
// U+2029, which SQLite leaves as they are; both read as the same id).
func duplicatePlatformIDMetadata(pid string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]string{duplicatePlatformIDKey: pid}) // a string map always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
