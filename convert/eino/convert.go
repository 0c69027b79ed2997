package eino

import (
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/schema"
	"github.com/sessiondb/sessiondb/store"
)

// ToStore converts eino messages to the store's, for AppendMessages. It
// refuses (with an *UnsupportedError) a message carrying what the store
// has no place for; see the package documentation.
func ToStore(msgs []*schema.Message) ([]store.NewMessage, error) {
	out := make([]store.NewMessage, 0, len(msgs))
	for i, m := range msgs {
		n, err := toStore(i, m)
		if err != nil {
			return nil, err
		}
		if err := n.Validate(); err != nil {
			return nil, fmt.Errorf("eino message %d: %w", i, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func toStore(i int, m *schema.Message) (store.NewMessage, error) {
	refuse := func(field, hint string) (store.NewMessage, error) {
		return store.NewMessage{}, &UnsupportedError{Message: i, Field: field, Hint: hint}
	}
	switch {
	case m == nil:
		return refuse("nil", "")
	case m.Name != "":
		return refuse("name", "")
	case len(m.MultiContent) > 0:
		return refuse("multi_content", "")
	case len(m.UserInputMultiContent) > 0:
		return refuse("user_input_multi_content", "")
	case len(m.AssistantGenMultiContent) > 0:
		return refuse("assistant_output_multi_content", "")
	}
	n := store.NewMessage{
		Role:       store.Role(m.Role),
		Content:    m.Content,
		Reasoning:  m.ReasoningContent,
		ToolCallID: m.ToolCallID,
		ToolName:   m.ToolName,
	}
	if rm := m.ResponseMeta; rm != nil {
		switch {
		case rm.Usage != nil:
			return refuse("response_meta.usage", "a turn's cost: record it with Store.RecordUsage(UsageOf(m)) and set it to nil first")
		case rm.LogProbs != nil:
			return refuse("response_meta.logprobs", "")
		}
		n.FinishReason = rm.FinishReason
	}
	for j, c := range m.ToolCalls {
		field := fmt.Sprintf("tool_calls[%d]", j)
		switch {
		case c.Index != nil:
			return refuse(field+".index", "a stream's chunk index: concatenate the stream first (schema.ConcatMessages)")
		case len(c.Extra) > 0:
			return refuse(field+".extra", "")
		case c.Type != "" && c.Type != "function":
			return refuse(field+".type", "")
		}
		n.ToolCalls = append(n.ToolCalls, store.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	if len(m.Extra) > 0 {
		b, err := json.Marshal(m.Extra)
		if err != nil {
			return refuse("extra", "it is not JSON: "+err.Error())
		}
		n.Metadata = string(b)
	}
	return n, nil
}

// FromStore converts stored messages back to eino's, for the next call of
// a ChatModel. Notes (store.RoleNote) are skipped: a note kept with a
// session is never given to a model as anyone's words. A message whose parts say more than its Content (an image,
// a file, a structured tool result another converter wrote) is refused
// with an *UnsupportedError.
func FromStore(msgs []store.Message) ([]*schema.Message, error) {
	out := make([]*schema.Message, 0, len(msgs))
	for i, m := range msgs {
		if m.Role == store.RoleNote {
			continue
		}
		if !plainParts(m) {
			return nil, &UnsupportedError{Message: i, Field: "parts", Hint: "eino's multimodal content is not converted yet"}
		}
		if m.ReasoningDetails != "" {
			return nil, &UnsupportedError{Message: i, Field: "reasoning_details"}
		}
		e := &schema.Message{
			Role:             schema.RoleType(m.Role),
			Content:          m.Content,
			ReasoningContent: m.Reasoning,
			ToolCallID:       m.ToolCallID,
			ToolName:         m.ToolName,
		}
		if m.FinishReason != "" {
			e.ResponseMeta = &schema.ResponseMeta{FinishReason: m.FinishReason}
		}
		for _, c := range m.ToolCalls {
			if c.ItemID != "" {
				return nil, &UnsupportedError{Message: i, Field: "tool_calls.item_id"}
			}
			e.ToolCalls = append(e.ToolCalls, schema.ToolCall{ID: c.ID, Type: "function",
				Function: schema.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		if m.Metadata != "" {
			if err := json.Unmarshal([]byte(m.Metadata), &e.Extra); err != nil {
				return nil, fmt.Errorf("eino: message %d: metadata: %w", i, err)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// plainParts reports whether m's parts say nothing its Content does not:
// none, or the text parts the store derives Content from alone.
func plainParts(m store.Message) bool {
	for _, p := range m.Parts {
		if p.Type != store.PartText || p.ItemID != "" || p.Attributes != "" {
			return false
		}
	}
	return len(m.Parts) <= 1
}

// UsageOf is a model response's usage as the store records it
// (Store.RecordUsage), with the model that did the work; the zero value
// when the message carries none.
func UsageOf(m *schema.Message, model string) store.UsageUpdate {
	u := store.UsageUpdate{Model: model}
	if m == nil || m.ResponseMeta == nil || m.ResponseMeta.Usage == nil {
		return u
	}
	t := m.ResponseMeta.Usage
	u.InputTokens = int64(t.PromptTokens)
	u.OutputTokens = int64(t.CompletionTokens)
	u.CacheReadTokens = int64(t.PromptTokenDetails.CachedTokens)
	u.ReasoningTokens = int64(t.CompletionTokensDetails.ReasoningTokens)
	u.APICalls = 1
	return u
}
