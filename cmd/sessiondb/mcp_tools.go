package main

// mcp_tools.go holds the MCP server's tools. Each validates its input (a
// bad argument is a tool error the agent can read and correct, never a
// crash), returns stored text made inert, and bounds its result: at most
// mcpMaxContent bytes of any one text and mcpMaxResult bytes of JSON in
// all, saying when it cut and how to ask for the rest.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

const (
	mcpMaxResult  = 64 << 10 // bytes of JSON in one tool result
	mcpMaxContent = 8 << 10  // bytes of one message's text (content, reasoning, arguments)
	mcpMaxNote    = 64 << 10 // bytes of a note
	mcpNotesID    = "mcp-notes"
)

type mcpTools struct {
	store *store.Store
	log   *slog.Logger
	// noteSessions are the sessions append_note may write to: mcpNotesID,
	// which the server makes, and those its --notes-session flags name.
	noteSessions []string
}

func (t *mcpTools) register(s *mcp.Server, allowNotes bool) {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	addTool(t, s, &mcp.Tool{Name: "search_messages", Annotations: ro, Description: "Find past messages containing every word " +
		"of the query (any text is valid; a \"quoted phrase\" is kept together). Filters: source, roles, session_id. " +
		"Sort: relevance (default), newest, oldest. Returns snippets with matches between >>> and <<<, and each hit's " +
		"message_id and session_id for read_messages_around."}, t.search)
	addTool(t, s, &mcp.Tool{Name: "list_sessions", Annotations: ro, Description: "List sessions, newest first, " +
		"optionally from one source or only live or ended ones."}, t.sessions)
	addTool(t, s, &mcp.Tool{Name: "read_conversation", Annotations: ro, Description: "Read a session's conversation " +
		"in order, a page at a time (offset, limit): the active messages a model sees, or with lineage the whole " +
		"conversation across compressions, each turn once. Notes kept with it (role \"note\") are shown in their " +
		"place; a model is never given them."}, t.conversation)
	addTool(t, s, &mcp.Tool{Name: "read_messages_around", Annotations: ro, Description: "Read the messages before " +
		"and after one message (a search hit's message_id) in its session."}, t.around)
	addTool(t, s, &mcp.Tool{Name: "session_lineage", Annotations: ro, Description: "The sessions one conversation " +
		"went through, root to compression tip (where it continues now)."}, t.lineage)
	addTool(t, s, &mcp.Tool{Name: "wait_for_messages", Annotations: ro, Description: "Wait for a session's next " +
		"messages: those with an id above after_id, returned as soon as there is one (at once when some are there " +
		"already), written by any process or machine sharing the store; an empty result with timed_out after " +
		"timeout_seconds. Call again with after_id = next_after_id to follow a conversation as it is written."}, t.wait)
	if allowNotes {
		no := false
		addTool(t, s, &mcp.Tool{Name: "append_note", Description: "Append a note to a session: a message of role " +
			"\"note\", kept, shown and searched with the session, and never given to a model as anyone's words " +
			"(not yours, not the user's) when the session is resumed. By default to the session \"" + mcpNotesID +
			"\" (made on first use); only to the sessions " + quotedList(t.noteSessions) + ". A retry with the same " +
			"idempotency_key does not add it twice.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}}, t.note)
	}
}

// addTool installs h, which may fail with any error: the error's text,
// folded onto one inert line, becomes the tool error; a panic is logged
// and answered as an internal error instead of taking the server down.
func addTool[In, Out any](t *mcpTools, s *mcp.Server, tool *mcp.Tool, h func(context.Context, In) (Out, error)) {
	mcp.AddTool(s, tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				t.log.Error("mcp: tool panicked", "tool", tool.Name, "panic", r)
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("%s: internal error", tool.Name)
			}
		}()
		out, err = h(ctx, in)
		if err != nil {
			return nil, out, errors.New(oneLine(err.Error()))
		}
		return nil, out, nil
	})
}

// badArg is a tool error about one argument.
func badArg(name, format string, args ...any) error {
	return fmt.Errorf("argument %s: %s", name, fmt.Sprintf(format, args...))
}

// inRange checks an optional integer argument: 0 stands for def.
func inRange(name string, v, def, lo, hi int) (int, error) {
	if v == 0 {
		return def, nil
	}
	if v < lo || v > hi {
		return 0, badArg(name, "%d is outside %d..%d", v, lo, hi)
	}
	return v, nil
}

// fit keeps items, in order, while their JSON fits in budget bytes, and
// reports whether it dropped any.
func fit[T any](items []T, budget int) ([]T, bool) {
	used := 0
	for i, it := range items {
		b, _ := json.Marshal(it)
		used += len(b) + 1
		if used > budget {
			return items[:i], true
		}
	}
	return items, false
}

// Records returned by the tools. Every text field passed through inert.

type mcpMessage struct {
	ID               int64         `json:"id"`
	SessionID        string        `json:"session_id"`
	Role             string        `json:"role"`
	Content          string        `json:"content"`
	ContentTruncated bool          `json:"content_truncated,omitempty" jsonschema:"the content was cut to 8 KiB"`
	ToolName         string        `json:"tool_name,omitempty"`
	ToolCallID       string        `json:"tool_call_id,omitempty"`
	ToolCalls        []mcpToolCall `json:"tool_calls,omitempty"`
	Reasoning        string        `json:"reasoning,omitempty"`
	State            string        `json:"state" jsonschema:"active, compacted (summarised away, still readable) or rewound"`
	Summary          bool          `json:"summary,omitempty" jsonschema:"a compression summary standing for earlier turns"`
	Model            string        `json:"model,omitempty" jsonschema:"the model that wrote the message, when recorded"`
	CreatedAt        string        `json:"created_at"`
}

type mcpToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func toMCPMessage(m db.Message) mcpMessage {
	out := mcpMessage{ID: m.ID, SessionID: inertText(m.SessionID), Role: string(m.Role), ToolName: inertText(m.ToolName),
		ToolCallID: inertText(m.ToolCallID), State: string(m.State), Summary: m.Summary, Model: inertText(m.Model),
		CreatedAt: stamp(m.CreatedAt)}
	var cut, cutR bool
	out.Content, cut = clip(inertText(m.Content), mcpMaxContent)
	out.Reasoning, cutR = clip(inertText(m.Reasoning), mcpMaxContent)
	for _, c := range m.ToolCalls {
		args, cutA := clip(inertText(c.Arguments), mcpMaxContent)
		cutR = cutR || cutA
		out.ToolCalls = append(out.ToolCalls, mcpToolCall{ID: inertText(c.ID), Name: inertText(c.Name), Arguments: args})
	}
	out.ContentTruncated = cut || cutR
	return out
}

type mcpSession struct {
	ID           string `json:"id"`
	Source       string `json:"source"`
	Title        string `json:"title,omitempty"`
	Model        string `json:"model,omitempty"`
	ParentID     string `json:"parent_session_id,omitempty"`
	Kind         string `json:"kind,omitempty" jsonschema:"what the session is to its parent: compression, branch, delegate, reset or tool"`
	StartedAt    string `json:"started_at"`
	EndedAt      string `json:"ended_at,omitempty"`
	EndReason    string `json:"end_reason,omitempty"`
	MessageCount int64  `json:"message_count"`
}

func toMCPSession(s db.Session) mcpSession {
	return mcpSession{ID: inertText(s.ID), Source: inertText(s.Source), Title: oneLine(s.Title), Model: inertText(s.Model),
		ParentID: inertText(s.ParentID), Kind: string(s.Kind), StartedAt: stamp(s.StartedAt), EndedAt: stamp(s.EndedAt),
		EndReason: inertText(s.EndReason), MessageCount: s.MessageCount}
}

// search_messages

type searchIn struct {
	Query     string   `json:"query" jsonschema:"the words to find; any text is valid"`
	Source    string   `json:"source,omitempty" jsonschema:"only sessions from this source (cli, gateway, ...)"`
	Roles     []string `json:"roles,omitempty" jsonschema:"only these roles: system, user, assistant, tool, note"`
	SessionID string   `json:"session_id,omitempty" jsonschema:"only this session"`
	Sort      string   `json:"sort,omitempty" jsonschema:"relevance (default), newest or oldest"`
	Limit     int      `json:"limit,omitempty" jsonschema:"hits to return, 1 to 50 (default 10)"`
	Offset    int      `json:"offset,omitempty" jsonschema:"hits to skip (the previous result's next_offset)"`
	Context   int      `json:"context,omitempty" jsonschema:"neighbouring messages to show before and after each hit, 0 to 5"`
}

type mcpContext struct {
	ID      int64  `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content" jsonschema:"cut to 200 characters"`
}

type mcpHit struct {
	MessageID int64        `json:"message_id"`
	SessionID string       `json:"session_id"`
	Role      string       `json:"role"`
	ToolName  string       `json:"tool_name,omitempty"`
	Snippet   string       `json:"snippet" jsonschema:"the text around the first match, matches between >>> and <<<"`
	CreatedAt string       `json:"created_at"`
	Source    string       `json:"source"`
	Model     string       `json:"model,omitempty"`
	Before    []mcpContext `json:"before,omitempty"`
	After     []mcpContext `json:"after,omitempty"`
}

type searchOut struct {
	Hits       []mcpHit `json:"hits"`
	Truncated  bool     `json:"truncated" jsonschema:"more hits exist: call again with offset = next_offset"`
	NextOffset int      `json:"next_offset,omitempty"`
}

func (t *mcpTools) search(ctx context.Context, in searchIn) (searchOut, error) {
	var o db.SearchOptions
	var err error
	if o.Limit, err = inRange("limit", in.Limit, 10, 1, 50); err != nil {
		return searchOut{}, err
	}
	if in.Offset < 0 {
		return searchOut{}, badArg("offset", "%d is negative", in.Offset)
	}
	if in.Context < 0 || in.Context > 5 {
		return searchOut{}, badArg("context", "%d is outside 0..5", in.Context)
	}
	sort, ok := sortNames[in.Sort]
	if in.Sort == "" {
		sort, ok = db.SortRelevance, true
	}
	if !ok {
		return searchOut{}, badArg("sort", "%q is not relevance, newest or oldest", in.Sort)
	}
	for _, r := range in.Roles {
		if !db.Role(r).Valid() {
			return searchOut{}, badArg("roles", "%q is not system, user, assistant, tool or note", r)
		}
		o.Roles = append(o.Roles, db.Role(r))
	}
	o.Source, o.SessionID, o.Sort, o.Offset, o.Context = in.Source, in.SessionID, sort, in.Offset, in.Context
	limit := o.Limit
	o.Limit++ // one more tells whether there are more
	hits, err := t.store.Search(ctx, in.Query, o)
	if err != nil {
		return searchOut{}, err
	}
	out := searchOut{Hits: []mcpHit{}}
	for _, h := range hits[:min(len(hits), limit)] {
		hit := mcpHit{MessageID: h.MessageID, SessionID: inertText(h.SessionID), Role: string(h.Role), ToolName: inertText(h.ToolName),
			Snippet: oneLine(h.Snippet), CreatedAt: stamp(h.CreatedAt), Source: inertText(h.Source), Model: inertText(h.Model)}
		for _, c := range h.Before {
			hit.Before = append(hit.Before, mcpContext{c.ID, string(c.Role), oneLine(c.Content)})
		}
		for _, c := range h.After {
			hit.After = append(hit.After, mcpContext{c.ID, string(c.Role), oneLine(c.Content)})
		}
		out.Hits = append(out.Hits, hit)
	}
	var cut bool
	out.Hits, cut = fit(out.Hits, mcpMaxResult)
	if cut || len(hits) > limit {
		out.Truncated, out.NextOffset = true, in.Offset+len(out.Hits)
	}
	return out, nil
}

// list_sessions

type sessionsIn struct {
	Source string `json:"source,omitempty" jsonschema:"only sessions from this source"`
	Status string `json:"status,omitempty" jsonschema:"any (default), live or ended"`
	Limit  int    `json:"limit,omitempty" jsonschema:"sessions to return, 1 to 100 (default 20)"`
	Offset int    `json:"offset,omitempty" jsonschema:"sessions to skip (the previous result's next_offset)"`
}

type sessionsOut struct {
	Sessions   []mcpSession `json:"sessions"`
	Truncated  bool         `json:"truncated" jsonschema:"more sessions exist: call again with offset = next_offset"`
	NextOffset int          `json:"next_offset,omitempty"`
}

func (t *mcpTools) sessions(ctx context.Context, in sessionsIn) (sessionsOut, error) {
	limit, err := inRange("limit", in.Limit, 20, 1, 100)
	if err != nil {
		return sessionsOut{}, err
	}
	if in.Offset < 0 {
		return sessionsOut{}, badArg("offset", "%d is negative", in.Offset)
	}
	f := db.SessionFilter{Source: in.Source, Limit: limit + 1, Offset: in.Offset}
	switch in.Status {
	case "", "any":
	case "live", "ended":
		ended := in.Status == "ended"
		f.Ended = &ended
	default:
		return sessionsOut{}, badArg("status", "%q is not any, live or ended", in.Status)
	}
	list, err := t.store.ListSessions(ctx, f)
	if err != nil {
		return sessionsOut{}, err
	}
	out := sessionsOut{Sessions: mapAll(list[:min(len(list), limit)], toMCPSession)}
	var cut bool
	out.Sessions, cut = fit(out.Sessions, mcpMaxResult)
	if cut || len(list) > limit {
		out.Truncated, out.NextOffset = true, in.Offset+len(out.Sessions)
	}
	return out, nil
}

// read_conversation

type conversationIn struct {
	SessionID        string `json:"session_id"`
	Lineage          bool   `json:"lineage,omitempty" jsonschema:"the whole conversation across compressions, root to tip, each turn once"`
	IncludeCompacted bool   `json:"include_compacted,omitempty" jsonschema:"also the messages summarised away by compression (single-session view)"`
	Offset           int    `json:"offset,omitempty" jsonschema:"messages to skip from the start (the previous result's next_offset)"`
	Limit            int    `json:"limit,omitempty" jsonschema:"messages to return, 1 to 200 (default 50)"`
}

type conversationOut struct {
	SessionID  string       `json:"session_id"`
	Total      int          `json:"total" jsonschema:"messages in the whole view"`
	Offset     int          `json:"offset"`
	Messages   []mcpMessage `json:"messages"`
	Truncated  bool         `json:"truncated" jsonschema:"more messages follow: call again with offset = next_offset"`
	NextOffset int          `json:"next_offset,omitempty"`
}

func (t *mcpTools) conversation(ctx context.Context, in conversationIn) (conversationOut, error) {
	limit, err := inRange("limit", in.Limit, 50, 1, 200)
	if err != nil {
		return conversationOut{}, err
	}
	if in.Offset < 0 {
		return conversationOut{}, badArg("offset", "%d is negative", in.Offset)
	}
	if in.SessionID == "" {
		return conversationOut{}, badArg("session_id", "is required")
	}
	ms, err := t.store.Conversation(ctx, in.SessionID, db.ConversationOptions{Lineage: in.Lineage, IncludeCompacted: in.IncludeCompacted,
		IncludeNotes: true})
	if err != nil {
		return conversationOut{}, err
	}
	page := ms[min(in.Offset, len(ms)):min(in.Offset+limit, len(ms))]
	out := conversationOut{SessionID: inertText(in.SessionID), Total: len(ms), Offset: in.Offset, Messages: mapAll(page, toMCPMessage)}
	out.Messages, _ = fit(out.Messages, mcpMaxResult)
	if next := in.Offset + len(out.Messages); next < len(ms) {
		out.Truncated, out.NextOffset = true, next
	}
	return out, nil
}

// read_messages_around

type aroundIn struct {
	MessageID int64 `json:"message_id" jsonschema:"a message id, e.g. a search hit's message_id"`
	Before    *int  `json:"before,omitempty" jsonschema:"messages before it, 0 to 50 (default 5)"`
	After     *int  `json:"after,omitempty" jsonschema:"messages after it, 0 to 50 (default 5)"`
}

type aroundOut struct {
	SessionID string       `json:"session_id"`
	MessageID int64        `json:"message_id"`
	Messages  []mcpMessage `json:"messages" jsonschema:"oldest first, the message itself among them"`
	Truncated bool         `json:"truncated" jsonschema:"the window was cut to fit the result size; ask for fewer before/after"`
}

func (t *mcpTools) around(ctx context.Context, in aroundIn) (aroundOut, error) {
	if in.MessageID <= 0 {
		return aroundOut{}, badArg("message_id", "%d is not a message id", in.MessageID)
	}
	n := [2]int{5, 5}
	for i, p := range []*int{in.Before, in.After} {
		if p == nil {
			continue
		}
		if *p < 0 || *p > 50 {
			return aroundOut{}, badArg([]string{"before", "after"}[i], "%d is outside 0..50", *p)
		}
		n[i] = *p
	}
	m, err := t.store.Message(ctx, in.MessageID)
	if err != nil {
		return aroundOut{}, err
	}
	var window []db.Message
	if n[0] > 0 {
		before, err := t.store.Messages(ctx, m.SessionID, db.MessageQuery{BeforeID: m.ID, NewestFirst: true, Limit: n[0]})
		if err != nil {
			return aroundOut{}, err
		}
		slices.Reverse(before)
		window = before
	}
	window = append(window, m)
	if n[1] > 0 {
		after, err := t.store.Messages(ctx, m.SessionID, db.MessageQuery{AfterID: m.ID, Limit: n[1]})
		if err != nil {
			return aroundOut{}, err
		}
		window = append(window, after...)
	}
	out := aroundOut{SessionID: inertText(m.SessionID), MessageID: m.ID, Messages: mapAll(window, toMCPMessage)}
	// Over the size cap, drop from the far ends first: the hit stays central.
	for {
		kept, cut := fit(out.Messages, mcpMaxResult)
		if !cut || len(out.Messages) <= 1 {
			out.Messages = kept
			break
		}
		out.Truncated = true
		if at := slices.IndexFunc(out.Messages, func(x mcpMessage) bool { return x.ID == m.ID }); at > len(out.Messages)-1-at {
			out.Messages = out.Messages[1:]
		} else {
			out.Messages = out.Messages[:len(out.Messages)-1]
		}
	}
	return out, nil
}

// session_lineage

type lineageIn struct {
	SessionID string `json:"session_id"`
}

type lineageOut struct {
	Sessions  []mcpSession `json:"sessions" jsonschema:"root first; the last is where the conversation continues"`
	Truncated bool         `json:"truncated"`
}

func (t *mcpTools) lineage(ctx context.Context, in lineageIn) (lineageOut, error) {
	if in.SessionID == "" {
		return lineageOut{}, badArg("session_id", "is required")
	}
	chain, err := t.store.Lineage(ctx, in.SessionID)
	if err != nil {
		return lineageOut{}, err
	}
	out := lineageOut{Sessions: mapAll(chain, toMCPSession)}
	out.Sessions, out.Truncated = fit(out.Sessions, mcpMaxResult)
	return out, nil
}

// append_note (only with --allow-notes)

type noteIn struct {
	Content        string `json:"content" jsonschema:"the note, at most 64 KiB"`
	SessionID      string `json:"session_id,omitempty" jsonschema:"the session to append to (default: mcp-notes); only a session the server was started to take notes in"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"makes a retry safe: the same key and content add the note once"`
}

type noteOut struct {
	SessionID string `json:"session_id"`
	MessageID int64  `json:"message_id"`
}

func (t *mcpTools) note(ctx context.Context, in noteIn) (noteOut, error) {
	switch {
	case in.Content == "":
		return noteOut{}, badArg("content", "is empty")
	case len(in.Content) > mcpMaxNote:
		return noteOut{}, badArg("content", "is %d bytes, over %d", len(in.Content), mcpMaxNote)
	}
	sid := cmp.Or(in.SessionID, mcpNotesID)
	if !slices.Contains(t.noteSessions, sid) {
		return noteOut{}, badArg("session_id", "%s is not open to notes: this server writes notes only to %s "+
			"(start it with --notes-session %s to add it)", quotedList([]string{inertText(sid)}), quotedList(t.noteSessions), inertText(sid))
	}
	if sid == mcpNotesID {
		if _, _, err := t.store.EnsureSession(ctx, db.NewSession{ID: sid, Source: "mcp"}); err != nil {
			return noteOut{}, err
		}
	}
	// A note, never an assistant message: on resume the model would be
	// given it as its own words.
	id, err := t.store.AppendMessage(ctx, sid, db.NewMessage{Role: db.RoleNote, Content: in.Content, IdempotencyKey: in.IdempotencyKey})
	if err != nil {
		return noteOut{}, err
	}
	return noteOut{SessionID: sid, MessageID: id}, nil
}

// quotedList is ids as a quoted, comma-separated list.
func quotedList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

// wait_for_messages

type waitIn struct {
	SessionID      string `json:"session_id"`
	AfterID        int64  `json:"after_id,omitempty" jsonschema:"only messages with a larger id (the previous result's next_after_id); 0 for the session's first"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"how long to wait for a first message, 1 to 120 (default 30)"`
	Limit          int    `json:"limit,omitempty" jsonschema:"messages to return, 1 to 200 (default 50)"`
}

type waitOut struct {
	SessionID   string       `json:"session_id"`
	Messages    []mcpMessage `json:"messages" jsonschema:"oldest first"`
	NextAfterID int64        `json:"next_after_id" jsonschema:"the after_id of the next call"`
	TimedOut    bool         `json:"timed_out" jsonschema:"no message came within timeout_seconds"`
	Truncated   bool         `json:"truncated" jsonschema:"more messages are there already: call again with after_id = next_after_id"`
}

// wait blocks on WatchMessages (LISTEN/NOTIFY or the engine's poll) for
// the first new message only, then reads what is there in one page: a
// tool call must return, so the stream is cut at the first arrival rather
// than held open.
func (t *mcpTools) wait(ctx context.Context, in waitIn) (waitOut, error) {
	if in.SessionID == "" {
		return waitOut{}, badArg("session_id", "is required")
	}
	if in.AfterID < 0 {
		return waitOut{}, badArg("after_id", "%d is negative", in.AfterID)
	}
	timeout, err := inRange("timeout_seconds", in.TimeoutSeconds, 30, 1, 120)
	if err != nil {
		return waitOut{}, err
	}
	limit, err := inRange("limit", in.Limit, 50, 1, 200)
	if err != nil {
		return waitOut{}, err
	}
	out := waitOut{SessionID: inertText(in.SessionID), NextAfterID: in.AfterID, Messages: []mcpMessage{}}
	waitCtx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
	defer cancel()
	arrived := false
	for _, err := range t.store.WatchMessages(waitCtx, in.SessionID, in.AfterID) {
		if err != nil {
			return waitOut{}, err
		}
		arrived = true
		break
	}
	if err := ctx.Err(); err != nil {
		return waitOut{}, err // the client went away: no answer is read
	}
	if !arrived {
		out.TimedOut = true
		return out, nil
	}
	ms, err := t.store.Messages(ctx, in.SessionID, db.MessageQuery{AfterID: in.AfterID, Limit: limit + 1})
	if err != nil {
		return waitOut{}, err
	}
	out.Messages = mapAll(ms[:min(len(ms), limit)], toMCPMessage)
	var cut bool
	out.Messages, cut = fit(out.Messages, mcpMaxResult)
	out.Truncated = cut || len(ms) > limit
	if n := len(out.Messages); n > 0 {
		out.NextAfterID = out.Messages[n-1].ID
	}
	return out, nil
}
