package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sessiondb/sessiondb/store/driver"
)

// ContinuedError refuses a write to a session whose conversation was
// compressed into a continuation: it names where the conversation went, so
// the caller can write there instead. It matches ErrSessionClosed.
type ContinuedError struct {
	SessionID string // the session written to
	ChildID   string // its compression child
	TipID     string // the end of the lineage: where new turns go (ChildID or a later continuation)
}

func (e *ContinuedError) Error() string {
	if e.TipID == e.ChildID {
		return fmt.Sprintf("session %q continues in compression child %q: write there", e.SessionID, e.ChildID)
	}
	return fmt.Sprintf("session %q continues in compression child %q; its conversation now ends in %q: write there",
		e.SessionID, e.ChildID, e.TipID)
}

func (e *ContinuedError) Is(target error) bool { return target == ErrSessionClosed }

// continuedError builds the ContinuedError for sessionID, which ended by
// compression, inside q's transaction.
func continuedError(ctx context.Context, q driver.Executor, sessionID string) error {
	ids, err := lineageIDs(ctx, q, sessionID)
	if err != nil {
		return err
	}
	at := slices.Index(ids, sessionID)
	if at < 0 || at == len(ids)-1 { // the child is gone (deleted); say what is known
		return fmt.Errorf("%w: it was continued in a compression child that no longer exists", ErrSessionClosed)
	}
	return &ContinuedError{SessionID: sessionID, ChildID: ids[at+1], TipID: ids[len(ids)-1]}
}

// IdempotencyConflictError refuses an append whose idempotency key, or
// platform message id, the session already holds for a different message:
// answering with the first message's id would silently drop the new one.
// It wraps ErrIdempotencyConflict.
//
// The key is looked up first: a message whose key names a stored message
// is judged against that one alone (its platform id is then one of the
// fields compared). Only a message whose key names nothing, or that has
// none, is looked up by its platform id — so a re-delivery the caller gave
// a fresh key is still recognised, and Key is "" in the error it gets.
//
// Two messages are the same when they agree on everything that was said:
// role, content, tool name, tool call id, tool calls (ids, names,
// arguments), reasoning, reasoning details, finish reason, the summary
// mark, parts, model, platform message id and metadata, and the creation
// time when the caller gave one. Token count is not compared — it is
// accounting, which a retry may recount — and neither is a creation time
// the store chose.
type IdempotencyConflictError struct {
	SessionID string
	// Key is the idempotency key that matched; "" when the match was by
	// PlatformMessageID.
	Key string
	// PlatformMessageID is the platform message id that matched, when the
	// appended message's key (if any) named no message.
	PlatformMessageID string
	MessageID         int64  // the message that holds the key or platform id
	Field             string // the first field that differs
}

func (e *IdempotencyConflictError) Error() string {
	if e.Key == "" && e.PlatformMessageID != "" {
		return fmt.Sprintf("platform message id %q of session %q already names message %d, which differs in its %s "+
			"(a re-delivery must be the same message; a new message needs its own platform id)",
			e.PlatformMessageID, e.SessionID, e.MessageID, e.Field)
	}
	return fmt.Sprintf("idempotency key %q of session %q already names message %d, which differs in its %s "+
		"(a retry must resend the same message; a new message needs a new key)", e.Key, e.SessionID, e.MessageID, e.Field)
}

func (e *IdempotencyConflictError) Unwrap() error { return ErrIdempotencyConflict }

// differingField names the first field in which stored and the message
// being appended differ ("" when they are the same message, as defined on
// IdempotencyConflictError).
func differingField(stored Message, m *NewMessage) string {
	switch {
	case stored.Role != m.Role:
		return "role"
	case stored.Content != m.Content:
		return "content"
	case stored.ToolName != m.ToolName:
		return "tool name"
	case stored.ToolCallID != m.ToolCallID:
		return "tool call id"
	case !sameToolCalls(stored.ToolCalls, m.ToolCalls):
		return "tool calls"
	case stored.Reasoning != m.Reasoning:
		return "reasoning"
	case stored.ReasoningDetails != m.ReasoningDetails:
		return "reasoning details"
	case stored.FinishReason != m.FinishReason:
		return "finish reason"
	case stored.Summary != m.Summary:
		return "summary mark"
	case !slices.Equal(stored.Parts, m.Parts):
		return "parts"
	case stored.Model != m.Model:
		return "model"
	case stored.PlatformMessageID != m.PlatformMessageID:
		return "platform message id"
	case stored.Metadata != m.Metadata:
		return "metadata"
	case stored.Observed != m.Observed:
		return "observed mark"
	case stored.EffectDisposition != m.EffectDisposition:
		return "effect disposition"
	case stored.ReasoningContent != m.ReasoningContent:
		return "reasoning content"
	case stored.DisplayKind != m.DisplayKind:
		return "display kind"
	case m.UID != "" && stored.UID != m.UID:
		return "uid"
	case m.CallUID != "" && stored.CallUID != m.CallUID:
		return "call uid"
	case !stored.ToolEndedAt.Equal(m.ToolEndedAt.Truncate(time.Millisecond)) || stored.ToolDuration != m.ToolDuration.Truncate(time.Millisecond):
		return "tool timing"
	case !m.CreatedAt.IsZero() && !stored.CreatedAt.Equal(m.CreatedAt.Truncate(time.Millisecond)):
		return "creation time"
	}
	return ""
}

// sameToolCalls compares a stored message's tool calls with a retry's:
// the UIDs the store minted for the first append are not the retry's to
// repeat, so a call without one matches any; a UID the retry gives must be
// the stored one.
func sameToolCalls(stored, retry []ToolCall) bool {
	return slices.EqualFunc(stored, retry, func(a, b ToolCall) bool {
		if b.UID == "" {
			a.UID = ""
		}
		return a == b
	})
}
