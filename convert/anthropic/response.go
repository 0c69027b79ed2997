package anthropic

import (
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/sessiondb/sessiondb/store"
)

// MessageToStore converts a Messages API response — the assistant turn a
// gateway keeps — into the message to append, with the model that wrote
// it (Model) and why it stopped (FinishReason, the stop reason). Its
// blocks are kept as ToStore keeps an assistant message's: thinking with
// its signature, text (its citations in the part's Attributes), tool calls
// with their input byte-exact. Server tool blocks and a tool call another
// tool made (a caller other than direct, or of a toolset) are refused with
// an *UnsupportedError: the store does not model them.
func MessageToStore(msg *anthropic.Message) (store.NewMessage, error) {
	blocks := make([]anthropic.ContentBlockParamUnion, 0, len(msg.Content))
	for j, b := range msg.Content {
		switch b.Type {
		case "text":
			text := anthropic.TextBlockParam{Text: b.Text}
			if len(b.Citations) > 0 {
				text = b.AsText().ToParam() // its citations, as the next request sends them
			}
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfText: &text})
		case "thinking":
			blocks = append(blocks, anthropic.NewThinkingBlock(b.Signature, b.Thinking))
		case "redacted_thinking":
			blocks = append(blocks, anthropic.NewRedactedThinkingBlock(b.Data))
		case "tool_use":
			if caller := b.AsToolUse().Caller.Type; caller != "" && caller != "direct" {
				return store.NewMessage{}, &UnsupportedError{Part: fmt.Sprintf("content[%d].caller (a tool call made by %s)", j, caller)}
			}
			if b.ToolsetName != "" {
				return store.NewMessage{}, &UnsupportedError{Part: fmt.Sprintf("content[%d].toolset_name", j)}
			}
			blocks = append(blocks, anthropic.NewToolUseBlock(b.ID, b.Input, b.Name))
		default:
			return store.NewMessage{}, &UnsupportedError{Part: part(j, b.Type)}
		}
	}
	ns, err := ToStore([]anthropic.MessageParam{anthropic.NewAssistantMessage(blocks...)})
	if err != nil {
		return store.NewMessage{}, err
	}
	ns[0].Model, ns[0].FinishReason = string(msg.Model), string(msg.StopReason)
	return ns[0], nil
}
