package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/internal/searchtext"
	"github.com/sessiondb/sessiondb/store/driver"
)

// Role is who said a message.
type Role string

// The roles a message may have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	// RoleNote is a note kept with a conversation: text that someone other
	// than its participants wrote about it (an agent's note through
	// `sessiondb mcp --allow-notes`, a person's annotation). It is stored,
	// shown and searched like any message, and never given to a model as
	// anyone's words: Conversation leaves notes out unless asked
	// (ConversationOptions.IncludeNotes), and the converters (convert/openai,
	// convert/anthropic) skip them. A note holds text and references (no
	// tool calls or results, no reasoning) and is never a summary.
	RoleNote Role = "note"
)

// Valid reports whether r is one of the five roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool, RoleNote:
		return true
	}
	return false
}

// MessageState says whether a message is part of the live conversation.
type MessageState string

const (
	// StateActive: part of the live conversation.
	StateActive MessageState = "active"
	// StateCompacted: summarised away by compression; still shown and searched.
	StateCompacted MessageState = "compacted"
	// StateRewound: undone by a rewind; hidden from views and search.
	StateRewound MessageState = "rewound"
)

// ToolCall is one tool invocation requested by an assistant message.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // as the model produced it (usually JSON)
	// ItemID is the provider's own id of the call's item (an OpenAI
	// Responses function_call's fc_…), when it has one besides ID.
	ItemID string `json:"item_id,omitempty"`
	// UID is the call's identity in the store (32 hex digits), minted when
	// the message is appended and kept inside the stored call by every
	// copy (compaction's carried tail, a continuation, ReplaceMessages
	// through AsNew, export and import). The tool result that answers the
	// call reads it as Message.CallUID. A caller may set it only to keep
	// the UID of a call it copies. It is sessiondb's, not the provider's:
	// leave it out of what goes back to a model.
	UID string `json:"uid,omitempty"`
}

// NewMessage is a message to append.
type NewMessage struct {
	Role Role
	// Content is any UTF-8 text, NUL bytes included; it is returned
	// byte-exact. Invalid UTF-8 is refused with ErrInvalidInput.
	Content    string
	ToolName   string // the tool that produced a RoleTool message
	ToolCallID string // the call a RoleTool message answers
	ToolCalls  []ToolCall
	Reasoning  string
	// ReasoningDetails is the provider's structured reasoning as JSON text
	// (Anthropic thinking blocks with their signatures, OpenAI reasoning
	// items), which the provider wants back verbatim: it is stored and
	// returned byte-exact, never re-encoded. Text that is not JSON (or not
	// UTF-8) is refused with ErrInvalidInput.
	ReasoningDetails string
	FinishReason     string
	TokenCount       int64
	// IdempotencyKey, when set, makes the append safe to retry after any
	// failure: appending the same message under the same key to the same
	// session again returns the first message's id and inserts nothing. A
	// different message under a key already used is refused with an
	// *IdempotencyConflictError (which also says what "same" compares).
	IdempotencyKey string
	// Summary marks a compression summary (a message that stands for the
	// turns it replaced).
	Summary bool
	// Parts is the content as the provider sent it, in order: text, image
	// and file references, tool use and tool results. Content, when left
	// empty, is filled with the parts' plain text (PlainText), and
	// ToolCalls with the tool_use parts; given both, they must agree.
	Parts []Part
	// Model is the model that wrote this message, when it differs from
	// the session's or the caller wants it on every message.
	Model string
	// CreatedAt is when the message was said, for imports and replays;
	// zero means now. It is stored to the millisecond and informs only:
	// messages stay in the order they were appended. It may not lie more
	// than MaxClockSkew ahead of this machine's clock: a session's last
	// activity is its newest message's time, and a message from the
	// future would pin it to the top of every session list.
	CreatedAt time.Time
	// PlatformMessageID is the chat platform's own id for the message. It
	// is unique within a session: appending a message whose platform id
	// the session already holds (in any state: a rewound or compacted row
	// keeps its id) is a re-delivery — the same message gets the first
	// one's id and inserts nothing, a different one an
	// *IdempotencyConflictError — so a webhook delivered twice is
	// recognised, within one batch too. Another session may hold the same
	// id. With an IdempotencyKey as well, the key is looked up first and
	// the platform id only when the key names no message; a re-delivery
	// found by its platform id does not record its new key.
	PlatformMessageID string
	// Metadata is a free-form JSON object the caller keeps with the
	// message, stored and returned byte-exact. Anything but a JSON object
	// (or text that is not UTF-8) is refused with ErrInvalidInput.
	Metadata string
	// Observed marks a message the agent only observed (a line of a group
	// chat not addressed to it): kept, shown and searched like any other,
	// but not a turn anyone answered.
	Observed bool
	// EffectDisposition is what a tool result did to the world, in the
	// caller's words ("applied", "rejected", "failed", …), so a replay
	// knows which effects happened. Only a RoleTool message has one.
	EffectDisposition string
	// ReasoningContent is a provider's reasoning_content field, kept apart
	// from Reasoning: providers that send both send two different texts.
	ReasoningContent string
	// DisplayKind says how a display transcript shows the message: ""
	// as itself, DisplayHidden not at all (the model still reads it: a
	// scaffold, an injected context block); any other label is the
	// caller's own (a UI's "command_result", "banner") and kept as given.
	// Compaction, export and import keep it.
	DisplayKind string
	// UID is set only to keep the identity of a message being copied
	// (ReplaceMessages of a rebuilt transcript, Message.AsNew): the new
	// row is the same turn. "" mints a new one, as for any new message.
	UID string
	// CallUID is set only to keep a copied tool result's pairing
	// (Message.CallUID, carried by AsNew) where the call it answers is not
	// copied with it. "" pairs the result on read, with the nearest
	// earlier call of its id.
	CallUID string
	// ToolEndedAt and ToolDuration say when a tool result's call ended and
	// how long it ran (zero: not said). Only a RoleTool message has them;
	// every copy of the row (compaction, a continuation, export and
	// import) keeps them, to the millisecond.
	ToolEndedAt  time.Time
	ToolDuration time.Duration
}

// DisplayHidden is the DisplayKind of a message the model reads and no
// display transcript shows.
const DisplayHidden = "hidden"

// MaxClockSkew is how far ahead of this machine's clock a caller-supplied
// NewMessage.CreatedAt may lie: another machine's clock may run ahead,
// by minutes, not days.
const MaxClockSkew = 24 * time.Hour

// minCreatedAt is the earliest caller-supplied CreatedAt: the Unix epoch,
// where millisecond timestamps begin.
var minCreatedAt = time.Unix(0, 0)

// Validate reports why AppendMessage would refuse m (an error matching
// ErrInvalidInput), or nil when it would accept it.
func (m *NewMessage) Validate() error {
	if !m.Role.Valid() {
		return invalid("role %q is not one of system, user, assistant, tool, note", m.Role)
	}
	if m.Role == RoleNote {
		if err := m.validateNote(); err != nil {
			return err
		}
	}
	if err := rules.CheckText("content", m.Content); err != nil {
		return err
	}
	if err := rules.CheckText("reasoning", m.Reasoning); err != nil {
		return err
	}
	if err := rules.CheckText("reasoning details", m.ReasoningDetails); err != nil {
		return err
	}
	if err := rules.CheckText("reasoning content", m.ReasoningContent); err != nil {
		return err
	}
	if m.CallUID != "" && m.Role != RoleTool {
		return invalid("a call uid belongs to a tool result, not a %s message", m.Role)
	}
	if m.EffectDisposition != "" && m.Role != RoleTool {
		return invalid("an effect disposition belongs to a tool result, not a %s message", m.Role)
	}
	if (!m.ToolEndedAt.IsZero() || m.ToolDuration != 0) && m.Role != RoleTool {
		return invalid("tool timing belongs to a tool result, not a %s message", m.Role)
	}
	if m.ToolDuration < 0 {
		return invalid("negative tool duration %v", m.ToolDuration)
	}
	if !m.ToolEndedAt.IsZero() && m.ToolEndedAt.Before(minCreatedAt) {
		return invalid("tool ended at %s is before 1970", m.ToolEndedAt.Format(time.RFC3339))
	}
	if m.ReasoningDetails != "" && !json.Valid([]byte(m.ReasoningDetails)) {
		return invalid("reasoning details are not JSON")
	}
	if err := rules.CheckText("metadata", m.Metadata); err != nil {
		return err
	}
	if m.Metadata != "" && !isJSONObject(m.Metadata) {
		return invalid("metadata is not a JSON object")
	}
	if !m.CreatedAt.IsZero() {
		if m.CreatedAt.Before(minCreatedAt) {
			return invalid("created at %s is before 1970", m.CreatedAt.Format(time.RFC3339))
		}
		if limit := time.Now().Add(MaxClockSkew); m.CreatedAt.After(limit) {
			return invalid("created at %s is more than %v ahead of this machine's clock", m.CreatedAt.Format(time.RFC3339), MaxClockSkew)
		}
	}
	if err := rules.CheckLabels([]rules.Field{
		{Name: "tool name", Value: m.ToolName},
		{Name: "tool call id", Value: m.ToolCallID},
		{Name: "finish reason", Value: m.FinishReason},
		{Name: "idempotency key", Value: m.IdempotencyKey},
		{Name: "model", Value: m.Model},
		{Name: "platform message id", Value: m.PlatformMessageID},
		{Name: "effect disposition", Value: m.EffectDisposition},
		{Name: "display kind", Value: m.DisplayKind},
		{Name: "uid", Value: m.UID},
		{Name: "call uid", Value: m.CallUID},
	}); err != nil {
		return err
	}
	if m.DisplayKind != "" {
		if err := checkToken("display kind", m.DisplayKind); err != nil {
			return err
		}
	}
	for _, c := range m.ToolCalls {
		if err := errors.Join(rules.CheckLabel("tool call id", c.ID), rules.CheckLabel("tool call name", c.Name),
			rules.CheckText("tool call arguments", c.Arguments), rules.CheckLabel("tool call item id", c.ItemID),
			rules.CheckLabel("tool call uid", c.UID)); err != nil {
			return err
		}
	}
	if m.TokenCount < 0 {
		return invalid("negative token count")
	}
	return validateParts(m)
}

// validateNote refuses in a note what only a turn of the conversation
// has: tool calls and results, reasoning, a summary's place.
func (m *NewMessage) validateNote() error {
	switch {
	case len(m.ToolCalls) > 0 || m.ToolName != "" || m.ToolCallID != "":
		return invalid("a note holds no tool call or tool result")
	case m.Reasoning != "" || m.ReasoningDetails != "" || m.ReasoningContent != "":
		return invalid("a note holds no reasoning")
	case m.Summary:
		return invalid("a note is never a compression summary")
	}
	for i, p := range m.Parts {
		if p.Type != PartText && p.Type != PartImage && p.Type != PartFile {
			return invalid("part %d: a note holds text, image and file parts, not %s", i, p.Type)
		}
	}
	return nil
}

// isJSONObject reports whether s is one JSON object.
func isJSONObject(s string) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &v) == nil && v != nil
}

// Message is a stored message.
type Message struct {
	ID             int64
	SessionID      string
	Role           Role
	Content        string
	ToolName       string
	ToolCallID     string
	ToolCalls      []ToolCall
	Reasoning      string
	FinishReason   string
	TokenCount     int64
	State          MessageState
	Summary        bool // a compression summary
	IdempotencyKey string
	CreatedAt      time.Time
	// OriginID is the id of the message this one was copied from by a
	// compression (0 for an original); the two are the same turn.
	OriginID int64
	// ReasoningDetails is the provider's structured reasoning (JSON text:
	// thinking blocks with their signatures), to be sent back verbatim.
	ReasoningDetails string
	// PlatformMessageID is the chat platform's id for the message.
	PlatformMessageID string
	// Parts is the content as ordered parts (nil for a message appended
	// as plain Content); see NewMessage.Parts.
	Parts []Part
	// Model is the model recorded on this message ("" when none was).
	Model string
	// Metadata is the caller's JSON object, byte-exact ("" when none).
	Metadata string
	// Observed, EffectDisposition and ReasoningContent: see NewMessage.
	Observed          bool
	EffectDisposition string
	ReasoningContent  string
	// DisplayKind is how a display transcript shows it (NewMessage.DisplayKind).
	DisplayKind string
	// ToolEndedAt and ToolDuration: see NewMessage (zero when not said).
	ToolEndedAt  time.Time
	ToolDuration time.Duration
	// UID is the message's identity, one per occurrence: minted when it
	// is first appended (two identical messages get two), and kept by
	// every copy of it — a compaction's carried tail and a continuation's
	// copy (which share their original's UID, as they share its turn),
	// export and import, `sessiondb copy`. "" for a row written before
	// schema version 19 (SQLite; 8 on PostgreSQL) reads a UID derived
	// from its original's id (legacyUID): stable, shared by its copies,
	// and never written back by a read.
	UID string
	// CallUID is, for a tool result, the UID of the tool call it answers
	// (ToolCall.UID): the nearest earlier call with its ToolCallID in its
	// session — for a carried copy, before its original — so a provider
	// that reuses call ids ("terminal:0") still pairs each result with its
	// own call. It is derived when read: the append path pays nothing for
	// it. A copy whose call was not copied with it (ReplaceMessages of
	// AsNew copies, an import) stores it instead (NewMessage.CallUID).
	// "" when no stored call has the id.
	CallUID string
}

// AppendMessage appends one message to a session and returns its id. It
// waits up to Options.TranscriptPatience for another process's write lock:
// losing a turn is worse than a late one. An unknown session gives
// ErrNotFound and creates nothing.
func (s *Store) AppendMessage(ctx context.Context, sessionID string, m NewMessage) (int64, error) {
	ids, err := s.appendMessages(ctx, "append message", sessionID, []NewMessage{m}, "")
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// AppendMessages appends messages to a session in one atomic transaction:
// all of them or none. It returns their ids in order (for a message whose
// idempotency key was already used, the first message's id).
func (s *Store) AppendMessages(ctx context.Context, sessionID string, ms []NewMessage) ([]int64, error) {
	return s.appendMessages(ctx, "append messages", sessionID, ms, "")
}

// AppendMessagesUnderLease appends like AppendMessages, as the holder of
// the conversation's turn lease: the lease is checked in the same
// transaction, so a worker whose turn was taken over (its lease expired and
// another acquired it) cannot write into the new turn — it gets
// ErrLeaseLost and nothing is written. A lease that expired but is still
// the holder's (no one took it) is renewed for DefaultLeaseTTL.
func (s *Store) AppendMessagesUnderLease(ctx context.Context, sessionID, holder string, ms []NewMessage) ([]int64, error) {
	const op = "append messages"
	if err := checkLease(holder, 0); err != nil {
		return nil, opErr(op, sessionID, err)
	}
	return s.appendMessages(ctx, op, sessionID, ms, holder)
}

// appendMessages is every append; leaseHolder, when set, must hold the
// conversation's turn lease.
func (s *Store) appendMessages(ctx context.Context, op, sessionID string, ms []NewMessage, leaseHolder string) ([]int64, error) {
	if err := rules.CheckID("session id", sessionID); err != nil {
		return nil, opErr(op, sessionID, err)
	}
	prepared, err := prepareMessages(sessionID, ms, s.MaxMessageBytes())
	if err != nil {
		return nil, opErr(op, sessionID, err)
	}
	var ids []int64
	fn := func(ctx context.Context, tx driver.Executor) (err error) {
		if leaseHolder != "" {
			if err := holdTurn(ctx, tx, sessionID, leaseHolder); err != nil {
				return err
			}
		}
		if len(prepared) == 0 { // no insert to find the session missing
			ids = []int64{}
			_, err := tx.SessionEndReason(ctx, sessionID)
			return err
		}
		ids, _, err = insertMessages(ctx, tx, sessionID, prepared)
		return err
	}
	if leaseHolder != "" {
		err = s.write(ctx, op, sessionID, s.opts.TranscriptPatience, fn) // the lease's rows too
	} else { // fn reads and writes only the session's rows (driver.Appender)
		err = s.writeAppend(ctx, op, sessionID, s.opts.TranscriptPatience, lookups(prepared), fn)
	}
	if err != nil {
		return nil, err
	}
	s.appended.Add(uint64(len(ids)))
	return ids, nil
}

// lookups names what an append looks up before it inserts
// (driver.Appender): each message's idempotency key and platform id.
func lookups(ms []preparedMessage) []string {
	var names []string
	for i := range ms {
		if k := ms[i].params.IdempotencyKey; k != nil {
			names = append(names, "k"+*k)
		}
		if p := ms[i].params.PlatformMessageID; p != nil {
			names = append(names, "p"+*p)
		}
	}
	return names
}

// preparedMessage is a checked NewMessage ready to insert.
type preparedMessage struct {
	params    driver.MessageInsertParams
	toolCalls int64
	msg       NewMessage // as given, to tell a retry from a reused key
}

// prepareMessages checks ms and turns them into insert parameters, before
// any transaction starts; a message over maxBytes (the engine's
// MaxMessageBytes) is refused with ErrTooLarge.
func prepareMessages(sessionID string, ms []NewMessage, maxBytes int64) ([]preparedMessage, error) {
	out := make([]preparedMessage, len(ms))
	for i := range ms {
		m := ms[i] // normalised here, never in the caller's slice
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		normalizeParts(&m)
		p, err := insertParams(sessionID, &m)
		if err == nil {
			err = checkSize(&p, maxBytes)
		}
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out[i] = preparedMessage{params: p, toolCalls: int64(len(m.ToolCalls)), msg: m}
	}
	return out, nil
}

// insertMessages inserts prepared messages into sessionID inside tx, in
// order, and counts them on the session. A message the session already
// holds is not inserted again (see repeatedMessage): its id is the first
// row's — when it is the same message; a different one is an
// *IdempotencyConflictError. New rows go only into a session that exists
// (the foreign key refuses them: ErrNotFound) and that compression has not
// closed (the count refuses them, appendRefused, and the write path then
// undoes the rows). A retry of an acknowledged append still gets its ids
// from a closed session. Neither needs a read of the session first, which
// was about 6% of all CPU at 16 and 64 appenders (docs/PERFORMANCE.md).
// The new rows go in together where the engine can (newRows).
// It returns how many rows it inserted: when any, the count's statement
// also moved the session's display revision (SessionAddMessageCounts), so
// a caller with more changes to show bumps it only when none were.
func insertMessages(ctx context.Context, tx driver.Executor, sessionID string, ms []preparedMessage) ([]int64, int64, error) {
	ids := make([]int64, len(ms)) // fresh on every (re)play
	rows := newRowsFor(tx, ids)
	inserted, calls := int64(0), int64(0)
	for i := range ms {
		m := &ms[i]
		if rows.repeats(&m.params) { // the lookup must find the earlier row
			if err := rows.flush(ctx); err != nil {
				return nil, 0, err
			}
		}
		id, found, err := repeatedMessage(ctx, tx, sessionID, m)
		if err != nil {
			return nil, 0, err
		}
		if found {
			ids[i] = id
			continue
		}
		p := m.params
		p.SessionID = sessionID
		if m.msg.CreatedAt.IsZero() {
			p.CreatedAt = now()
		}
		if err := rows.add(ctx, i, p); err != nil {
			return nil, 0, err
		}
		inserted++
		calls += m.toolCalls
	}
	if err := rows.flush(ctx); err != nil {
		return nil, 0, err
	}
	if inserted == 0 {
		return ids, 0, nil
	}
	counted, err := tx.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{
		ID: sessionID, Messages: inserted, ToolCalls: calls})
	if err != nil {
		return nil, 0, err
	}
	if counted == 0 {
		return nil, 0, appendRefused(ctx, tx, sessionID)
	}
	return ids, inserted, nil
}

// appendRefused says why the session did not count new messages: it
// does not exist (ErrNotFound), or compression closed it (*ContinuedError,
// naming where the conversation went on, or ErrSessionClosed).
func appendRefused(ctx context.Context, tx driver.Executor, sessionID string) error {
	reason, err := tx.SessionEndReason(ctx, sessionID)
	if err != nil {
		return err
	}
	if rules.Str(reason) != compressionEndReason { // read open in the same transaction: never expected
		return fmt.Errorf("session %q refused new messages although open (end reason %q)", sessionID, rules.Str(reason))
	}
	return continuedError(ctx, tx, sessionID)
}

// repeatedMessage finds the message of sessionID that m repeats: the one
// holding m's idempotency key, else the one holding its platform message
// id. The key is asked first because it is the caller's own retry token;
// the platform id catches a re-delivery the caller gave a new key (a
// gateway keying by delivery, not by message). A match that is not the
// same message (differingField) is an *IdempotencyConflictError. Earlier
// messages of the same batch count: they are in the session by now.
func repeatedMessage(ctx context.Context, tx driver.Executor, sessionID string, m *preparedMessage) (int64, bool, error) {
	if key := m.params.IdempotencyKey; key != nil {
		id, err := tx.MessageIDByIdempotencyKey(ctx, driver.MessageIDByIdempotencyKeyParams{
			SessionID: sessionID, IdempotencyKey: key})
		if err == nil {
			return id, true, sameMessage(ctx, tx, id, &m.msg, false)
		}
		if !errors.Is(err, ErrNotFound) {
			return 0, false, err
		}
	}
	if pid := m.params.PlatformMessageID; pid != nil {
		id, err := tx.MessageIDByPlatformID(ctx, driver.MessageIDByPlatformIDParams{
			SessionID: sessionID, PlatformMessageID: pid})
		if err == nil {
			return id, true, sameMessage(ctx, tx, id, &m.msg, true)
		}
		if !errors.Is(err, ErrNotFound) {
			return 0, false, err
		}
	}
	return 0, false, nil
}

// sameMessage returns an *IdempotencyConflictError unless message id,
// which holds m's idempotency key (or, byPlatformID, its platform message
// id), is the same message as m.
func sameMessage(ctx context.Context, tx driver.Executor, id int64, m *NewMessage, byPlatformID bool) error {
	row, err := tx.MessageGet(ctx, id)
	if err != nil {
		return err
	}
	stored, err := messageFromRow(&row)
	if err != nil {
		return err
	}
	field := differingField(stored, m)
	switch {
	case field == "":
		return nil
	case byPlatformID:
		return &IdempotencyConflictError{SessionID: stored.SessionID, PlatformMessageID: m.PlatformMessageID, MessageID: id, Field: field}
	}
	return &IdempotencyConflictError{SessionID: stored.SessionID, Key: m.IdempotencyKey, MessageID: id, Field: field}
}

func insertParams(sessionID string, m *NewMessage) (driver.MessageInsertParams, error) {
	p := driver.MessageInsertParams{
		SessionID: sessionID, Role: string(m.Role), Content: m.Content,
		ToolName: rules.Ptr(m.ToolName), ToolCallID: rules.Ptr(m.ToolCallID), Reasoning: rules.Ptr(m.Reasoning),
		ReasoningDetails: rules.Ptr(m.ReasoningDetails), FinishReason: rules.Ptr(m.FinishReason), IdempotencyKey: rules.Ptr(m.IdempotencyKey),
		Model: rules.Ptr(m.Model), PlatformMessageID: rules.Ptr(m.PlatformMessageID), MetadataJson: rules.Ptr(m.Metadata),
		Observed: rules.B2I(m.Observed), EffectDisposition: rules.Ptr(m.EffectDisposition), ReasoningContent: rules.Ptr(m.ReasoningContent),
		DisplayKind: rules.Ptr(m.DisplayKind), Uid: rules.Ptr(orDefault(m.UID, newUID())),
		CallUid: rules.Ptr(m.CallUID),
	}
	p.ToolEndedAt, p.ToolDurationMs = toolTiming(m.ToolEndedAt, m.ToolDuration)
	if m.Summary {
		p.IsSummary = 1
	}
	if m.TokenCount > 0 {
		p.TokenCount = &m.TokenCount
	}
	if len(m.ToolCalls) > 0 {
		calls := slices.Clone(m.ToolCalls) // m keeps the caller's, to tell a retry (differingField)
		mintCallUIDs(calls)
		b, err := json.Marshal(calls)
		if err != nil {
			return p, invalid("tool calls: %v", err)
		}
		p.ToolCallsJson = rules.Ptr(string(b))
		p.ToolText = searchtext.ToolText(string(b))
	}
	if len(m.Parts) > 0 {
		b, err := json.Marshal(m.Parts)
		if err != nil {
			return p, invalid("parts: %v", err)
		}
		p.PartsJson = rules.Ptr(string(b))
	}
	if !m.CreatedAt.IsZero() {
		p.CreatedAt = m.CreatedAt.UnixMilli() // else the insert's own time (insertMessages)
	}
	return p, nil
}

// MessageQuery selects messages for Messages. The zero value returns the
// first 1000 messages, oldest first, without rewound ones.
type MessageQuery struct {
	AfterID        int64 // only ids greater than this
	BeforeID       int64 // only ids smaller than this (0 = no bound)
	Limit          int   // default 1000, at most 100000
	NewestFirst    bool
	IncludeRewound bool
}

// maxMessagesLimit is the most rows one Messages call returns; AllMessages
// streams a session of any length.
const maxMessagesLimit = 100_000

// Messages returns a session's messages. An unknown session gives
// ErrNotFound.
func (s *Store) Messages(ctx context.Context, sessionID string, mq MessageQuery) ([]Message, error) {
	switch {
	case mq.Limit < 0 || mq.AfterID < 0 || mq.BeforeID < 0:
		return nil, opErr("list messages", sessionID, invalid("negative limit or id bound"))
	case mq.Limit == 0:
		mq.Limit = 1000
	case mq.Limit > maxMessagesLimit:
		mq.Limit = maxMessagesLimit
	}
	if mq.BeforeID == 0 {
		mq.BeforeID = math.MaxInt64
	}
	rewound := rules.B2I(mq.IncludeRewound)
	var out []Message
	err := s.read(ctx, "list messages", sessionID, func(q driver.Executor) error {
		var rows []driver.Message
		var err error
		if mq.NewestFirst {
			rows, err = q.MessageListDescending(ctx, driver.MessageListDescendingParams{
				SessionID: sessionID, AfterID: mq.AfterID, BeforeID: mq.BeforeID,
				IncludeRewound: rewound, RowLimit: int64(mq.Limit)})
		} else {
			rows, err = q.MessageListAscending(ctx, driver.MessageListAscendingParams{
				SessionID: sessionID, AfterID: mq.AfterID, BeforeID: mq.BeforeID,
				IncludeRewound: rewound, RowLimit: int64(mq.Limit)})
		}
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return sessionMustExist(ctx, q, sessionID)
		}
		out = make([]Message, len(rows))
		for i := range rows {
			if out[i], err = messageFromRow(&rows[i]); err != nil {
				return err
			}
		}
		return newCallPairer().pairAll(ctx, q, out)
	})
	return out, err
}

func messageFromRow(r *driver.Message) (Message, error) {
	m := Message{
		ID: r.ID, SessionID: r.SessionID, Role: Role(r.Role), Content: r.Content,
		ToolName: rules.Str(r.ToolName), ToolCallID: rules.Str(r.ToolCallID), Reasoning: rules.Str(r.Reasoning),
		FinishReason: rules.Str(r.FinishReason), State: MessageState(r.State), Summary: r.IsSummary != 0,
		IdempotencyKey: rules.Str(r.IdempotencyKey), CreatedAt: fromMillis(r.CreatedAt),
		ReasoningDetails: rules.Str(r.ReasoningDetails), PlatformMessageID: rules.Str(r.PlatformMessageID),
		Model: rules.Str(r.Model), Metadata: rules.Str(r.MetadataJson),
		Observed: r.Observed != 0, EffectDisposition: rules.Str(r.EffectDisposition), ReasoningContent: rules.Str(r.ReasoningContent),
		DisplayKind: rules.Str(r.DisplayKind), UID: rules.Str(r.Uid), CallUID: rules.Str(r.CallUid),
	}
	if r.ToolEndedAt != nil {
		m.ToolEndedAt = fromMillis(*r.ToolEndedAt)
	}
	if r.ToolDurationMs != nil {
		m.ToolDuration = time.Duration(*r.ToolDurationMs) * time.Millisecond
	}
	if r.OriginID != nil {
		m.OriginID = *r.OriginID
	}
	if r.TokenCount != nil {
		m.TokenCount = *r.TokenCount
	}
	if r.ToolCallsJson != nil {
		if err := json.Unmarshal([]byte(*r.ToolCallsJson), &m.ToolCalls); err != nil {
			return m, fmt.Errorf("message %d: %w", r.ID, badStoredJSON("tool calls", err))
		}
	}
	if r.PartsJson != nil {
		if err := json.Unmarshal([]byte(*r.PartsJson), &m.Parts); err != nil {
			return m, fmt.Errorf("message %d: %w", r.ID, badStoredJSON("parts", err))
		}
	}
	m.fillLegacyUIDs()
	return m, nil
}

// Message returns one message by id, in whatever state it is (a search
// hit names only the id; its session and neighbours follow from here). An
// unknown id gives ErrNotFound.
func (s *Store) Message(ctx context.Context, id int64) (Message, error) {
	const op = "get message"
	if id <= 0 {
		return Message{}, opErr(op, "", invalid("message id %d is not positive", id))
	}
	var m Message
	err := s.read(ctx, op, "", func(q driver.Executor) error {
		row, err := q.MessageGet(ctx, id)
		if err != nil {
			return fmt.Errorf("message %d: %w", id, err)
		}
		if m, err = messageFromRow(&row); err != nil {
			return err
		}
		return newCallPairer().see(ctx, q, &m)
	})
	return m, err
}

// toolTiming is a tool result's timing as stored: milliseconds, NULL when
// not said.
func toolTiming(endedAt time.Time, d time.Duration) (ended, durationMs *int64) {
	if !endedAt.IsZero() {
		ms := endedAt.UnixMilli()
		ended = &ms
	}
	if ms := d.Milliseconds(); ms != 0 {
		durationMs = &ms
	}
	return ended, durationMs
}
