package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/sessiondb/sessiondb/store"
)

// FromStore converts stored messages into Anthropic message params, in
// order: tool results and the user text after them become one user
// message, and an assistant message's reasoning details come back as its
// first blocks, byte for byte as they were given.
func FromStore(ms []store.Message) ([]anthropic.MessageParam, error) {
	var out []anthropic.MessageParam
	openResults := false // the last message is a user message of tool results, ready for more
	for _, m := range ms {
		var err error
		switch m.Role {
		case store.RoleSystem:
			var sys *anthropic.SystemMessageParam
			if sys, err = systemMessage(m); err == nil {
				out = append(out, anthropic.MessageParam{OfSystem: sys})
			}
			openResults = false
		case store.RoleUser, store.RoleTool:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Role == store.RoleUser {
				blocks, err = userBlocks(m)
			} else {
				var result anthropic.ContentBlockParamUnion
				result, err = toolResultBlock(m)
				blocks = []anthropic.ContentBlockParamUnion{result}
			}
			if openResults {
				last := out[len(out)-1].OfUser
				last.Content = append(last.Content, blocks...)
			} else {
				out = append(out, anthropic.NewUserMessage(blocks...))
			}
			openResults = m.Role == store.RoleTool
		case store.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if blocks, err = assistantBlocks(m); err == nil {
				out = append(out, anthropic.NewAssistantMessage(blocks...))
			}
			openResults = false
		case store.RoleNote:
			// A note is nobody's words: never given to the model. Tool
			// results on either side of it still form one user message.
		default:
			err = fmt.Errorf("role %q: %w", m.Role, store.ErrInvalidInput)
		}
		if err != nil {
			return nil, fmt.Errorf("anthropic: message %d: %w", m.ID, err)
		}
	}
	return out, nil
}

func systemMessage(m store.Message) (*anthropic.SystemMessageParam, error) {
	if len(m.Parts) == 0 {
		return &anthropic.SystemMessageParam{Content: []anthropic.TextBlockParam{{Text: m.Content}}}, nil
	}
	sys := &anthropic.SystemMessageParam{}
	for _, p := range m.Parts {
		if p.Type != store.PartText {
			return nil, fmt.Errorf("a %s part in a system message (Anthropic takes text): %w", p.Type, store.ErrInvalidInput)
		}
		b, err := partToBlock(p)
		if err != nil {
			return nil, err
		}
		sys.Content = append(sys.Content, *b.OfText)
	}
	return sys, nil
}

// userBlocks is a user message's content: its parts, or its Content as
// one text block.
func userBlocks(m store.Message) ([]anthropic.ContentBlockParamUnion, error) {
	if len(m.Parts) == 0 {
		return []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(m.Content)}, nil
	}
	blocks := make([]anthropic.ContentBlockParamUnion, 0, len(m.Parts))
	for _, p := range m.Parts {
		if p.Type == store.PartToolUse {
			return nil, fmt.Errorf("a tool_use part in a user message: %w", store.ErrInvalidInput)
		}
		b, err := partToBlock(p)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// toolResultBlock is a RoleTool message as a tool_result block: from its
// Content, or from its parts (a leading tool_result part gives is_error,
// cache_control and the first text; the other parts are the result's
// content).
func toolResultBlock(m store.Message) (anthropic.ContentBlockParamUnion, error) {
	parts := m.Parts
	if len(parts) == 0 {
		parts = []store.Part{{Type: store.PartToolResult, Text: m.Content}}
	}
	r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if head := parts[0]; head.Type == store.PartToolResult {
		if _, err := withAttributes(anthropic.ContentBlockParamUnion{OfToolResult: &r}, head.Attributes); err != nil {
			return anthropic.ContentBlockParamUnion{}, err
		}
		if head.IsError {
			r.IsError = anthropic.Bool(true)
		}
		if head.Text != "" {
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: head.Text}})
		}
		parts = parts[1:]
	}
	for _, p := range parts {
		if p.Type != store.PartText && p.Type != store.PartImage && p.Type != store.PartFile {
			return anthropic.ContentBlockParamUnion{}, fmt.Errorf("a %s part in a tool result: %w", p.Type, store.ErrInvalidInput)
		}
		b, err := partToBlock(p)
		if err != nil {
			return b, err
		}
		r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: b.OfText, OfImage: b.OfImage, OfDocument: b.OfDocument})
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}, nil
}

// assistantBlocks is an assistant message's content: its reasoning
// details' blocks first, then its parts in order (a reasoning part as the
// thinking block it holds), or its Content and ToolCalls.
func assistantBlocks(m store.Message) ([]anthropic.ContentBlockParamUnion, error) {
	blocks, err := reasoningBlocks(m.ReasoningDetails)
	if err != nil {
		return nil, err
	}
	if len(m.Parts) == 0 && (m.Content != "" || (len(blocks) == 0 && len(m.ToolCalls) == 0)) {
		blocks = append(blocks, anthropic.NewTextBlock(m.Content))
	}
	for _, p := range m.Parts {
		switch p.Type {
		case store.PartToolResult:
			return nil, fmt.Errorf("a tool_result part in an assistant message: %w", store.ErrInvalidInput)
		case store.PartReasoning:
			thinking, err := reasoningBlocks(p.Data)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, thinking...)
			continue
		}
		b, err := partToBlock(p)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	if !hasToolUse(m.Parts) {
		for _, c := range m.ToolCalls {
			b, err := toolUseBlock(c)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		}
	}
	return blocks, nil
}

// reasoningBlock is one element of ReasoningDetails, read only as far as
// needed to rebuild an Anthropic block.
type reasoningBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
}

// reasoningBlocks rebuilds the thinking and redacted_thinking blocks kept
// in details (a JSON array, or one object: a reasoning part's Data);
// another provider's items are left out, as Anthropic cannot take them.
func reasoningBlocks(details string) ([]anthropic.ContentBlockParamUnion, error) {
	if details == "" {
		return nil, nil
	}
	var items []reasoningBlock
	if err := json.Unmarshal([]byte(details), &items); err != nil {
		var one reasoningBlock
		if err := json.Unmarshal([]byte(details), &one); err != nil {
			return nil, fmt.Errorf("reasoning details: %v: %w", err, store.ErrInvalidInput)
		}
		items = []reasoningBlock{one}
	}
	var blocks []anthropic.ContentBlockParamUnion
	for _, it := range items {
		switch it.Type {
		case "thinking":
			blocks = append(blocks, anthropic.NewThinkingBlock(it.Signature, it.Thinking))
		case "redacted_thinking":
			blocks = append(blocks, anthropic.NewRedactedThinkingBlock(it.Data))
		}
	}
	return blocks, nil
}
