package store

import (
	"context"
	"math"
	"slices"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// ConversationOptions choose a conversation view.
type ConversationOptions struct {
	// Lineage shows the whole conversation, root to compression tip: every
	// session's active and compacted rows, each turn once (a copy made by
	// compression and its original are one turn; the later copy's state
	// wins, the first position stays). It is the display transcript's
	// messages (DisplayPage), so DisplayHidden rows are left out.
	Lineage bool
	// IncludeCompacted adds the session's compacted rows to the
	// single-session view (the default is what a model sees: active rows).
	IncludeCompacted bool
	// IncludeNotes adds the notes (RoleNote) to either view, in their
	// place. Without it no view holds a note: what Conversation returns by
	// default can be given to a model, and a note is nobody's words.
	IncludeNotes bool
}

// conversationPage is how many rows one query of a view reads.
const conversationPage = 5000

// Conversation returns a session's conversation in order (by id, never by
// timestamp): by default its active rows, the live context a model is
// given; see ConversationOptions for the display views. Rewound rows are
// never part of it, and notes only when asked (IncludeNotes).
func (s *Store) Conversation(ctx context.Context, sessionID string, o ConversationOptions) ([]Message, error) {
	var out []Message
	err := s.snapshot(ctx, "get conversation", sessionID, func(q driver.Executor) error {
		out = nil
		if !o.Lineage {
			if err := sessionMustExist(ctx, q, sessionID); err != nil {
				return err
			}
			return visibleMessages(ctx, q, sessionID, false, func(m Message) {
				if m.State == StateActive || o.IncludeCompacted {
					out = append(out, m)
				}
			})
		}
		ids, err := lineageIDs(ctx, q, sessionID)
		if err != nil {
			return err
		}
		items, err := displayItems(ctx, q, ids, false, false)
		for _, it := range items {
			out = append(out, *it.Message)
		}
		return err
	})
	if !o.IncludeNotes {
		out = slices.DeleteFunc(out, func(m Message) bool { return m.Role == RoleNote })
	}
	return out, err
}

// visibleMessages calls fn for each active or compacted message of a
// session (rewound ones too with rewound), oldest first, a page at a time.
func visibleMessages(ctx context.Context, q driver.Executor, sessionID string, rewound bool, fn func(Message)) error {
	after, pairer := int64(0), newCallPairer()
	for {
		rows, err := q.MessageListAscending(ctx, driver.MessageListAscendingParams{SessionID: sessionID,
			AfterID: after, BeforeID: math.MaxInt64, IncludeRewound: rules.B2I(rewound), RowLimit: conversationPage})
		if err != nil {
			return err
		}
		for i := range rows {
			r := &rows[i]
			m, err := messageFromRow(r)
			if err != nil {
				return err
			}
			if err := pairer.see(ctx, q, &m); err != nil {
				return err
			}
			fn(m)
			after = r.ID
		}
		if len(rows) < conversationPage {
			return nil
		}
	}
}

// displayKey is what makes two rows the same thing said: the reference
// store's display identity (role, text, tool fields, time).
type displayKey struct {
	role, content, toolName, toolCallID, toolCalls string
	at                                             int64
}

func displayKeyOf(m Message) displayKey {
	k := displayKey{role: string(m.Role), content: m.Content, toolName: m.ToolName, toolCallID: m.ToolCallID,
		at: m.CreatedAt.UnixMilli()}
	for _, c := range m.ToolCalls {
		k.toolCalls += c.ID + "\x00" + c.Name + "\x00" + c.Arguments + "\x00"
	}
	return k
}
