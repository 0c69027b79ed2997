package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"iter"
	"slices"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// The two transcripts of a conversation.
//
// The model transcript is what a model is given: a session's active rows
// (Conversation with no options), hidden ones (DisplayHidden) included,
// notes and command receipts never.
//
// The display transcript is what a person is shown: the whole lineage,
// root to compression tip, each turn once (a compression copy and its
// original are one turn, at the original's place), compacted rows
// included, notes and command receipts in their place, DisplayHidden rows
// left out. Every display read gives the same rows in the same order:
// Conversation with Lineage, DisplayTranscript and DisplayPage. Rewound
// rows are in neither transcript.

// DisplayItem is one row of a display transcript: a message or a command
// receipt (exactly one is set).
type DisplayItem struct {
	Message *Message
	Receipt *CommandReceipt
}

// DisplayPageOptions choose a page of a display transcript.
type DisplayPageOptions struct {
	// Limit is the most items returned (0 = 100; at most 1000).
	Limit int
	// Offset skips items: from the first, or with Latest from the newest.
	Offset int
	// Latest counts the page back from the newest item; the page itself
	// stays in order, oldest first.
	Latest bool
	// KnownRevision is the Revision of a page the caller already holds.
	// When it is still the conversation's, the page says Unchanged and no
	// message is read: a poll of an idle conversation costs its lineage
	// walk and one session row a member.
	KnownRevision string
	// IncludeHidden adds the DisplayHidden rows (an audit view).
	IncludeHidden bool
}

// DisplayPage is one page of a conversation's display transcript.
type DisplayPage struct {
	SessionID string // as asked
	RootID    string // the lineage's root
	TipID     string // its compression tip
	// Revision names the display transcript's state: it changes with every
	// visible change anywhere in the lineage (an append, a compaction, a
	// rewind, a receipt, an import, a session joining or leaving the
	// lineage) and with nothing else (a title, a pin, an archive flag).
	Revision string
	// Unchanged: KnownRevision is Revision; Items is nil and Total 0.
	Unchanged bool
	Items     []DisplayItem
	// Total is how many items the whole display transcript holds, and
	// Offset where Items start in it (counted from the first).
	Total, Offset int
}

// Display page limits.
const (
	defaultDisplayPage = 100
	maxDisplayPage     = 1000
)

// DisplayPage returns a page of the display transcript of the conversation
// sessionID belongs to (any member of its lineage names it). Revision and
// items come from one snapshot. Deduplication runs over the whole lineage
// before the page is cut, so pages never repeat or skip a turn; the work
// of a changed page is the lineage's rows, of an unchanged one none. An
// unknown session gives ErrNotFound.
func (s *Store) DisplayPage(ctx context.Context, sessionID string, o DisplayPageOptions) (DisplayPage, error) {
	const op = "get display page"
	switch {
	case o.Limit < 0 || o.Limit > maxDisplayPage:
		return DisplayPage{}, opErr(op, sessionID, invalid("limit %d is not between 0 and %d", o.Limit, maxDisplayPage))
	case o.Offset < 0:
		return DisplayPage{}, opErr(op, sessionID, invalid("negative offset %d", o.Offset))
	}
	if err := rules.CheckID("session id", sessionID); err != nil {
		return DisplayPage{}, opErr(op, sessionID, err)
	}
	limit := o.Limit
	if limit == 0 {
		limit = defaultDisplayPage
	}
	var p DisplayPage
	err := s.snapshot(ctx, op, sessionID, func(q driver.Executor) error {
		p = DisplayPage{SessionID: sessionID}
		ids, err := lineageIDs(ctx, q, sessionID)
		if err != nil {
			return err
		}
		p.RootID, p.TipID = ids[0], ids[len(ids)-1]
		if p.Revision, err = displayRevision(ctx, q, ids); err != nil {
			return err
		}
		if o.KnownRevision != "" && o.KnownRevision == p.Revision {
			p.Unchanged = true
			return nil
		}
		items, err := displayItems(ctx, q, ids, true, o.IncludeHidden)
		if err != nil {
			return err
		}
		p.Total = len(items)
		start, end := o.Offset, o.Offset+limit
		if o.Latest {
			start, end = len(items)-o.Offset-limit, len(items)-o.Offset
		}
		start, end = max(0, min(start, len(items))), max(0, min(end, len(items)))
		p.Offset = start
		if start < end {
			p.Items = slices.Clone(items[start:end])
		}
		return nil
	})
	return p, err
}

// DisplayTranscript streams the display transcript of the conversation
// sessionID belongs to, oldest first: the items of DisplayPage, every
// page of them, read in one snapshot. The stream ends at the first error,
// which it yields.
func (s *Store) DisplayTranscript(ctx context.Context, sessionID string) iter.Seq2[DisplayItem, error] {
	return func(yield func(DisplayItem, error) bool) {
		var items []DisplayItem
		err := s.snapshot(ctx, "get display transcript", sessionID, func(q driver.Executor) error {
			ids, err := lineageIDs(ctx, q, sessionID)
			if err != nil {
				return err
			}
			items, err = displayItems(ctx, q, ids, true, false)
			return err
		})
		if err != nil {
			yield(DisplayItem{}, err)
			return
		}
		for _, it := range items {
			if !yield(it, nil) {
				return
			}
		}
	}
}

// DisplayRevision returns the Revision of the display transcript of the
// conversation sessionID belongs to (see DisplayPage.Revision), reading
// no message.
func (s *Store) DisplayRevision(ctx context.Context, sessionID string) (string, error) {
	var rev string
	err := s.snapshot(ctx, "get display revision", sessionID, func(q driver.Executor) error {
		ids, err := lineageIDs(ctx, q, sessionID)
		if err != nil {
			return err
		}
		rev, err = displayRevision(ctx, q, ids)
		return err
	})
	return rev, err
}

// displayRevision names the display state of a lineage: each member's
// id, start and display_revision counter, hashed. A counter moves once per
// visible change of its session, in that change's transaction; a session
// joining or leaving the lineage changes the member list. So the name
// changes exactly when the display may have, without a write to every
// member of a long lineage on every append (which a single counter on the
// root would need). The start time tells a deleted session from a new one
// given the same id.
func displayRevision(ctx context.Context, q driver.Executor, ids []string) (string, error) {
	h := sha256.New()
	var n [8]byte
	for _, id := range ids {
		r, err := q.SessionDisplayRevision(ctx, id)
		if err != nil {
			return "", err
		}
		h.Write([]byte(id))
		h.Write([]byte{0})
		binary.BigEndian.PutUint64(n[:], uint64(r.StartedAt))
		h.Write(n[:])
		binary.BigEndian.PutUint64(n[:], uint64(r.DisplayRevision))
		h.Write(n[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:12]), nil
}

// displayItems is the display transcript of a lineage (ids, root first),
// with its receipts when asked and its hidden rows when asked.
//
// A turn is an original and its copies (origin_id, or one UID). It keeps
// the place of its first row and shows its latest row: a copy's state
// wins, so a rewound copy hides the turn and a retired original shows its
// live copy. Rewound rows are read for that, then dropped.
//
// A row of a later session that says again what an earlier session said —
// same role, text, tool fields and time (a prompt re-sent after a resume)
// — is that turn too, as the reference store's display identity has it;
// there the live row wins. Rows of one session are never folded so (one
// batch shares its time).
//
// A receipt sits after the message that was its session's newest when it
// was recorded, even when that message is rewound later.
func displayItems(ctx context.Context, q driver.Executor, ids []string, receipts, hidden bool) ([]DisplayItem, error) {
	var out []DisplayItem
	at := map[int64]int{}          // turn -> index in out
	byUID := map[string]int64{}    // uid -> turn
	said := map[displayKey]int64{} // what earlier sessions said -> turn
	for _, sid := range ids {
		var rs []driver.CommandReceipt
		if receipts {
			var err error
			if rs, err = q.CommandReceiptList(ctx, sid); err != nil {
				return nil, err
			}
		}
		emitUpTo := func(id int64) { // receipts recorded before message id existed
			for len(rs) > 0 && rs[0].AfterMessageID < id {
				r := receiptFromRow(rs[0])
				out = append(out, DisplayItem{Receipt: &r})
				rs = rs[1:]
			}
		}
		mine := map[displayKey]int64{}
		err := visibleMessages(ctx, q, sid, true, func(m Message) {
			emitUpTo(m.ID)
			turn := m.ID
			if m.OriginID != 0 {
				turn = m.OriginID
			}
			if m.UID != "" {
				if t, ok := byUID[m.UID]; ok {
					turn = t
				} else {
					byUID[m.UID] = turn
				}
			}
			k := displayKeyOf(m)
			if _, copied := at[turn]; !copied {
				if t, ok := said[k]; ok {
					if m.State != StateRewound || out[at[t]].Message.State == StateRewound {
						out[at[t]] = DisplayItem{Message: &m}
					}
					return
				}
			}
			if _, ok := mine[k]; !ok {
				mine[k] = turn
			}
			if i, ok := at[turn]; ok {
				out[i] = DisplayItem{Message: &m}
				return
			}
			at[turn] = len(out)
			out = append(out, DisplayItem{Message: &m})
		})
		if err != nil {
			return nil, err
		}
		emitUpTo(1<<63 - 1)
		for k, turn := range mine {
			if _, ok := said[k]; !ok {
				said[k] = turn
			}
		}
	}
	return slices.DeleteFunc(out, func(it DisplayItem) bool {
		m := it.Message
		return m != nil && (m.State == StateRewound || (!hidden && m.DisplayKind == DisplayHidden))
	}), nil
}
