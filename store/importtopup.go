package store

import (
	"context"
	"fmt"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// maxImportSkips caps ImportResult.Skips.
const maxImportSkips = 50

// ImportSkip is an existing session Import left as it is although the file
// holds it, and why: the store's copy is not a prefix of the file's.
type ImportSkip struct {
	SessionID string
	Reason    string
}

// topUp walks an existing session's rows, in seq order, beside the file's
// messages of it: while both have rows they must be the same message;
// once the store's run out, the file's remaining messages are new.
type topUp struct {
	tx      driver.Executor
	session string
	page    []driver.Message
	after   int64 // id of the last row read
	done    bool  // the store's rows are read to the end
	rows    int64 // the store's rows matched so far
}

const topUpPage = 500

// next returns the store's next row of the session; false once there are
// no more. It never reads again after that: rows the import then appends
// would come back.
func (u *topUp) next(ctx context.Context) (driver.Message, bool, error) {
	if u.done {
		return driver.Message{}, false, nil
	}
	if len(u.page) == 0 {
		rows, err := u.tx.MessageExportPage(ctx, driver.MessageExportPageParams{SessionID: u.session, AfterID: u.after, RowLimit: topUpPage})
		if err != nil {
			return driver.Message{}, false, err
		}
		if len(rows) == 0 {
			u.done = true
			return driver.Message{}, false, nil
		}
		u.page = rows
	}
	m := u.page[0]
	u.page = u.page[1:]
	u.after = m.ID
	return m, true, nil
}

// sameSession says how an existing session differs from the file's record
// of it in what a copy never changes ("" when it does not): its source,
// user and start. It keeps a file that merely reuses an id (an empty
// session's above all) from appending to someone else's conversation.
func sameSession(row driver.Session, rec sessionRecord) string {
	switch {
	case row.Source != rec.Source:
		return fmt.Sprintf("the store's session has source %q, the file's %q", row.Source, rec.Source)
	case rules.Str(row.UserID) != rec.UserID:
		return "the store's session belongs to another user"
	case row.StartedAt != rec.StartedAt:
		return fmt.Sprintf("the store's session started at %d, the file's at %d", row.StartedAt, rec.StartedAt)
	}
	return ""
}

// sameImportedMessage says how a stored row differs from the file's message at
// the same seq ("" when it is the same message): role, content, tool name
// and call id, idempotency key, creation time, state and summary flag,
// parts, model, metadata, reasoning details and platform message id.
// A state differing (a rewind or compaction on either side) is a
// divergence too: appending after it would not give the file's session.
func sameImportedMessage(m driver.Message, rec messageRecord) string {
	switch {
	case m.Role != rec.Role || m.Content != rec.Content:
		return "role or content differ"
	case rules.Str(m.ToolName) != rec.ToolName || rules.Str(m.ToolCallID) != rec.ToolCallID:
		return "tool name or call id differ"
	case rules.Str(m.IdempotencyKey) != rec.IdempotencyKey:
		return "idempotency keys differ"
	case m.CreatedAt != rec.CreatedAt:
		return "creation times differ"
	case m.State != rec.State || (m.IsSummary != 0) != rec.Summary:
		return "state differs"
	case rules.Str(m.PlatformMessageID) != rec.PlatformMessageID:
		return "platform message ids differ"
	case rules.Str(m.Model) != rec.Model || rules.Str(m.MetadataJson) != rec.Metadata:
		return "model or metadata differ"
	case rules.Str(m.ReasoningDetails) != rec.ReasoningDetails:
		return "reasoning details differ"
	case (m.Observed != 0) != rec.Observed || rules.Str(m.EffectDisposition) != rec.EffectDisposition ||
		rules.Str(m.ReasoningContent) != rec.ReasoningContent:
		return "observed mark, effect disposition or reasoning content differ"
	case rules.Str(m.DisplayKind) != rec.DisplayKind:
		return "display kinds differ"
	case !sameMillis(m.ToolEndedAt, rec.ToolEndedAt) || !sameMillis(m.ToolDurationMs, rec.ToolDurationMs):
		return "tool timings differ"
	case rec.UID != "" && m.Uid != nil && *m.Uid != rec.UID:
		return "uids differ"
	}
	if parts, err := rec.partsJSON(); err != nil || rules.Str(parts) != rules.Str(m.PartsJson) {
		return "parts differ"
	}
	return ""
}

// sameMillis compares two optional stored numbers.
func sameMillis(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
