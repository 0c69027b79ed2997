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
		switch m.Role {
		case store.RoleSystem:
			out = append(out, anthropic.MessageParam{OfSystem: &anthropic.SystemMessageParam{
				Content: []anthropic.TextBlockParam{{Text: m.Content}}}})
			openResults = false
		case store.RoleUser:
			text := anthropic.NewTextBlock(m.Content)
			if openResults {
				last := out[len(out)-1].OfUser
				last.Content = append(last.Content, text)
			} else {
				out = append(out, anthropic.NewUserMessage(text))
			}
			openResults = false
		case store.RoleTool:
			result := toolResultBlock(m)
			if openResults {
				last := out[len(out)-1].OfUser
				last.Content = append(last.Content, result)
			} else {
				out = append(out, anthropic.NewUserMessage(result))
			}
			openResults = true
		case store.RoleAssistant:
			blocks, err := assistantBlocks(m)
			if err != nil {
				return nil, fmt.Errorf("anthropic: message %d: %w", m.ID, err)
			}
			out = append(out, anthropic.NewAssistantMessage(blocks...))
			openResults = false
		default:
			return nil, fmt.Errorf("anthropic: message %d: role %q: %w", m.ID, m.Role, store.ErrInvalidInput)
		}
	}
	return out, nil
}

func toolResultBlock(m store.Message) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.Content != "" {
		r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
}

func assistantBlocks(m store.Message) ([]anthropic.ContentBlockParamUnion, error) {
	blocks, err := reasoningBlocks(m.ReasoningDetails)
	if err != nil {
		return nil, err
	}
	if m.Content != "" || (len(blocks) == 0 && len(m.ToolCalls) == 0) {
		blocks = append(blocks, anthropic.NewTextBlock(m.Content))
	}
	for _, c := range m.ToolCalls {
		args := c.Arguments
		if args == "" {
			args = "{}" // Anthropic wants an object; no arguments is an empty one
		}
		if !json.Valid([]byte(args)) {
			return nil, fmt.Errorf("tool call %s: arguments are not JSON: %w", c.ID, store.ErrInvalidInput)
		}
		blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, json.RawMessage(args), c.Name))
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
// in details (a JSON array, or one object); another provider's items are
// left out, as Anthropic cannot take them.
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
