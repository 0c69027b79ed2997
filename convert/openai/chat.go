package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/sessiondb/sessiondb/store"
)

// ChatToStore converts chat completion message params into messages to
// append, in order. It refuses (an *UnsupportedError) a message holding
// anything the store cannot keep, after checking that converting the
// result back gives the input again.
func ChatToStore(msgs []openai.ChatCompletionMessageParamUnion) ([]store.NewMessage, error) {
	out := make([]store.NewMessage, 0, len(msgs))
	toolNames := map[string]string{} // call id → function name
	for i, m := range msgs {
		n := store.NewMessage{}
		switch {
		case m.OfSystem != nil:
			n = store.NewMessage{Role: store.RoleSystem, Content: m.OfSystem.Content.OfString.Value}
		case m.OfUser != nil:
			n = store.NewMessage{Role: store.RoleUser, Content: m.OfUser.Content.OfString.Value}
		case m.OfAssistant != nil:
			a := m.OfAssistant
			n = store.NewMessage{Role: store.RoleAssistant, Content: a.Content.OfString.Value}
			for j, c := range a.ToolCalls {
				if c.OfFunction == nil {
					return nil, &UnsupportedError{Message: i, Part: fmt.Sprintf("tool_calls[%d] (a custom tool call: the store keeps function calls)", j)}
				}
				f := c.OfFunction
				toolNames[f.ID] = f.Function.Name
				n.ToolCalls = append(n.ToolCalls, store.ToolCall{ID: f.ID, Name: f.Function.Name, Arguments: f.Function.Arguments})
			}
		case m.OfTool != nil:
			n = store.NewMessage{Role: store.RoleTool, ToolCallID: m.OfTool.ToolCallID,
				ToolName: toolNames[m.OfTool.ToolCallID], Content: m.OfTool.Content.OfString.Value}
		case m.OfDeveloper != nil:
			return nil, &UnsupportedError{Message: i, Part: "the developer role (the store has system, user, assistant, tool)"}
		case m.OfFunction != nil:
			return nil, &UnsupportedError{Message: i, Part: "a function message (deprecated; use tool messages)"}
		default:
			return nil, &UnsupportedError{Message: i, Part: "a message with no role"}
		}
		out = append(out, n)
	}
	back, err := ChatFromStore(asStored(out))
	if err != nil {
		return nil, err
	}
	if err := losslessJSON(msgs, back); err != nil {
		return nil, err
	}
	return out, nil
}

// ChatFromStore converts stored messages into chat completion message
// params, in order. Reasoning is left out: the chat completions API takes
// none back.
func ChatFromStore(ms []store.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(ms))
	for _, m := range ms {
		switch m.Role {
		case store.RoleSystem:
			out = append(out, openai.SystemMessage(m.Content))
		case store.RoleUser:
			out = append(out, openai.UserMessage(m.Content))
		case store.RoleTool:
			out = append(out, openai.ToolMessage(m.Content, m.ToolCallID))
		case store.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments}}})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return nil, fmt.Errorf("openai: message %d: role %q: %w", m.ID, m.Role, store.ErrInvalidInput)
		}
	}
	return out, nil
}

// losslessJSON compares the JSON encodings of an input and its round trip.
func losslessJSON(in, back any) error {
	want, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("openai: encode input: %w", err)
	}
	got, err := json.Marshal(back)
	if err != nil {
		return fmt.Errorf("openai: encode round trip: %w", err)
	}
	return lossless(want, got)
}

func typeOf(s *string) string {
	if s == nil || *s == "" {
		return "an untyped value"
	}
	return *s
}
