package store

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
)

// PartType says what a content part is.
type PartType string

// The kinds of content part a message may hold, in the order the provider
// sent them.
const (
	// PartText is text the model or the user wrote (Text).
	PartText PartType = "text"
	// PartImage is a reference to an image: MediaType and one of URL
	// (https:, data:, file: …) or BlobID (the caller's blob store).
	PartImage PartType = "image"
	// PartFile is a reference to a document, as PartImage, with an
	// optional Name.
	PartFile PartType = "file"
	// PartToolUse is a tool call inside an assistant message's content
	// (ToolCallID, Name, Input): Anthropic's tool_use block.
	PartToolUse PartType = "tool_use"
	// PartToolResult is a tool's output inside a message's content
	// (ToolCallID, Text, IsError): Anthropic's tool_result block.
	PartToolResult PartType = "tool_result"
	// PartReasoning is the model's reasoning where the provider put it
	// among the content (Data, optional Text): an Anthropic thinking block
	// between tool calls, an OpenAI Responses reasoning item. Data is the
	// provider's own JSON of it, which it wants back verbatim; a message
	// whose reasoning all comes first may keep it in ReasoningDetails
	// instead.
	PartReasoning PartType = "reasoning"
)

// MaxParts bounds the parts of one message.
const MaxParts = 4096

// Part is one ordered piece of a message's content. Which fields a part
// uses depends on its Type (see the PartType constants); the others must
// be empty. Parts are stored and returned as given: every string
// byte-exact, the order kept. Images and files are references, never the
// bytes themselves — inline data belongs in a data: URL or the caller's
// blob store.
type Part struct {
	Type PartType `json:"type"`
	// Text is a text part's text, or a tool result's output.
	Text string `json:"text,omitempty"`
	// MediaType is an image's or file's MIME type ("image/png").
	MediaType string `json:"media_type,omitempty"`
	// URL locates an image or file (a data: URL carries it inline).
	URL string `json:"url,omitempty"`
	// BlobID names an image or file in the caller's blob store.
	BlobID string `json:"blob_id,omitempty"`
	// Detail is the resolution an image is to be read at, as the provider
	// names it ("auto", "low", "high"); optional.
	Detail string `json:"detail,omitempty"`
	// Name is a file's name, or the tool a tool_use part calls.
	Name string `json:"name,omitempty"`
	// ToolCallID is a tool_use part's id, or the call a tool_result
	// answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Input is a tool_use part's arguments, JSON text kept byte-exact.
	Input string `json:"input,omitempty"`
	// IsError marks a tool_result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// Data is a reasoning part's provider JSON, kept byte-exact.
	Data string `json:"data,omitempty"`
	// ItemID is the provider's own id of the item the part was (an OpenAI
	// Responses item: msg_…, fc_…, rs_…), which it may require back; any
	// part may carry one.
	ItemID string `json:"item_id,omitempty"`
	// Attributes are the provider's own fields of the part that the store
	// does not model (an OpenAI message's phase, an Anthropic block's
	// cache_control or citations), as a JSON object kept byte-exact, so a
	// converter can send them back. Any part may carry them; they are not
	// searched and not part of PlainText.
	Attributes string `json:"attributes,omitempty"`
}

// validate reports why p cannot be stored (an error matching
// ErrInvalidInput); i is its index, for the message.
func (p *Part) validate(i int) error {
	fail := func(format string, args ...any) error {
		return invalid("part %d (%s): "+format, append([]any{i, p.Type}, args...)...)
	}
	if err := rules.CheckLabels([]rules.Field{
		{Name: "media type", Value: p.MediaType},
		{Name: "detail", Value: p.Detail},
		{Name: "name", Value: p.Name},
		{Name: "tool call id", Value: p.ToolCallID},
		{Name: "item id", Value: p.ItemID},
	}); err != nil {
		return fail("%v", err)
	}
	if err := rules.CheckTexts([]rules.Field{
		{Name: "text", Value: p.Text},
		{Name: "url", Value: p.URL},
		{Name: "blob id", Value: p.BlobID},
		{Name: "input", Value: p.Input},
		{Name: "data", Value: p.Data},
		{Name: "attributes", Value: p.Attributes},
	}); err != nil {
		return fail("%v", err)
	}
	if p.Attributes != "" && !isJSONObject(p.Attributes) {
		return fail("attributes are not a JSON object")
	}
	// unused lists the fields set that the part's type does not use
	// (every type may carry an item id and attributes).
	unused := func(allowed ...string) error {
		set := map[string]bool{"text": p.Text != "", "media type": p.MediaType != "", "url": p.URL != "",
			"blob id": p.BlobID != "", "detail": p.Detail != "", "name": p.Name != "",
			"tool call id": p.ToolCallID != "", "input": p.Input != "", "is_error": p.IsError, "data": p.Data != ""}
		for _, f := range allowed {
			delete(set, f)
		}
		var extra []string
		for f, on := range set {
			if on {
				extra = append(extra, f)
			}
		}
		if len(extra) > 0 {
			slices.Sort(extra)
			return fail("has %s, which a %s part does not carry", strings.Join(extra, ", "), p.Type)
		}
		return nil
	}
	switch p.Type {
	case PartText:
		return unused("text")
	case PartImage, PartFile:
		switch {
		case p.MediaType == "" || !strings.Contains(p.MediaType, "/"):
			return fail("media type %q is not a MIME type (type/subtype)", p.MediaType)
		case (p.URL == "") == (p.BlobID == ""):
			return fail("needs exactly one of a URL and a blob id")
		case p.URL != "":
			if u, err := url.Parse(p.URL); err != nil || u.Scheme == "" {
				return fail("url %.40q is not an absolute URL", p.URL)
			}
		}
		if p.Type == PartImage {
			return unused("media type", "url", "blob id", "detail")
		}
		return unused("media type", "url", "blob id", "name")
	case PartToolUse:
		switch {
		case p.ToolCallID == "" || p.Name == "":
			return fail("needs a tool call id and a name")
		case p.Input != "" && !json.Valid([]byte(p.Input)):
			return fail("input is not JSON")
		}
		return unused("tool call id", "name", "input")
	case PartToolResult:
		if p.ToolCallID == "" {
			return fail("needs the tool call id it answers")
		}
		return unused("tool call id", "text", "is_error")
	case PartReasoning:
		if p.Data == "" || !json.Valid([]byte(p.Data)) {
			return fail("data is not JSON (a reasoning part keeps the provider's JSON of it)")
		}
		return unused("data", "text")
	}
	return invalid("part %d: type %q is not one of text, image, file, tool_use, tool_result, reasoning", i, p.Type)
}

// validateParts checks a message's parts and how they agree with its
// flat tool calls.
func validateParts(m *NewMessage) error {
	if len(m.Parts) > MaxParts {
		return invalid("%d parts, more than %d", len(m.Parts), MaxParts)
	}
	for i := range m.Parts {
		if err := m.Parts[i].validate(i); err != nil {
			return err
		}
	}
	if calls := partToolCalls(m.Parts); len(calls) > 0 && len(m.ToolCalls) > 0 && !sameToolCalls(m.ToolCalls, calls) {
		return invalid("tool calls differ from the tool_use parts (give one, or the same calls in both)")
	}
	return nil
}

// normalizeParts fills what a message with parts implies and the caller
// left out: the plain-text Content (the text parts and tool results, one
// per line, for search and for callers that want a string) and the flat
// ToolCalls (from the tool_use parts, for counts and for OpenAI-shaped
// callers). A Content or ToolCalls the caller gave is kept as given.
func normalizeParts(m *NewMessage) {
	if len(m.Parts) == 0 {
		return
	}
	if m.Content == "" {
		m.Content = PlainText(m.Parts)
	}
	if len(m.ToolCalls) == 0 {
		m.ToolCalls = partToolCalls(m.Parts)
	}
}

// PlainText is the plain-text form of parts: the text of each text part
// and tool result, joined by newlines. Images, files, tool calls and
// reasoning are not part of it.
func PlainText(parts []Part) string {
	var texts []string
	for _, p := range parts {
		if (p.Type == PartText || p.Type == PartToolResult) && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func partToolCalls(parts []Part) []ToolCall {
	var calls []ToolCall
	for _, p := range parts {
		if p.Type == PartToolUse {
			calls = append(calls, ToolCall{ID: p.ToolCallID, Name: p.Name, Arguments: p.Input, ItemID: p.ItemID})
		}
	}
	return calls
}

// Stored is the Message the store returns for m once appended, but for
// what only the store assigns (id, session, state, a creation time m left
// to it): m's fields, with Content and ToolCalls filled from its Parts as
// AppendMessage fills them. A converter checks itself with it without a
// round trip through a store.
func (m NewMessage) Stored() Message {
	normalizeParts(&m)
	return Message{Role: m.Role, Content: m.Content, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
		ToolCalls: m.ToolCalls, Reasoning: m.Reasoning, FinishReason: m.FinishReason, TokenCount: m.TokenCount,
		Summary: m.Summary, IdempotencyKey: m.IdempotencyKey, CreatedAt: m.CreatedAt.Truncate(time.Millisecond),
		ReasoningDetails: m.ReasoningDetails, PlatformMessageID: m.PlatformMessageID, Parts: m.Parts,
		Model: m.Model, Metadata: m.Metadata}
}
