package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/sessiondb/sessiondb/internal/jsondiff"
	"github.com/sessiondb/sessiondb/store"
)

// ToStore converts Anthropic message params into messages to append, in
// order. It refuses (an *UnsupportedError) a message holding anything the
// store cannot keep, after checking that converting the result back gives
// the input again.
func ToStore(msgs []anthropic.MessageParam) ([]store.NewMessage, error) {
	var out []store.NewMessage
	toolNames := map[string]string{} // tool_use id → name, for the results that answer it
	for i, m := range msgs {
		var err error
		switch {
		case m.OfSystem != nil:
			out, err = systemToStore(out, m.OfSystem)
		case m.OfUser != nil:
			out, err = userToStore(out, m.OfUser.Content, toolNames)
		case m.OfAssistant != nil:
			out, err = assistantToStore(out, m.OfAssistant.Content, toolNames)
		default:
			err = &UnsupportedError{Part: "a message with no role"}
		}
		if err != nil {
			if u, ok := err.(*UnsupportedError); ok {
				u.Message = i
			}
			return nil, err
		}
	}
	if err := checkLossless(msgs, out); err != nil {
		return nil, err
	}
	return out, nil
}

func systemToStore(out []store.NewMessage, m *anthropic.SystemMessageParam) ([]store.NewMessage, error) {
	if len(m.Content) != 1 {
		return nil, &UnsupportedError{Part: fmt.Sprintf("a system message of %d text blocks (the store keeps one)", len(m.Content))}
	}
	return append(out, store.NewMessage{Role: store.RoleSystem, Content: m.Content[0].Text}), nil
}

func userToStore(out []store.NewMessage, blocks []anthropic.ContentBlockParamUnion, toolNames map[string]string) ([]store.NewMessage, error) {
	texts := 0
	for j, b := range blocks {
		switch {
		case b.OfToolResult != nil:
			r := b.OfToolResult
			if r.IsError.Value {
				return nil, &UnsupportedError{Part: part(j, "tool_result marked is_error")}
			}
			content, err := toolResultText(j, r.Content)
			if err != nil {
				return nil, err
			}
			out = append(out, store.NewMessage{Role: store.RoleTool, ToolCallID: r.ToolUseID,
				ToolName: toolNames[r.ToolUseID], Content: content})
		case b.OfText != nil:
			if texts++; texts > 1 {
				return nil, &UnsupportedError{Part: part(j, "a second text block (the store keeps one)")}
			}
			out = append(out, store.NewMessage{Role: store.RoleUser, Content: b.OfText.Text})
		default:
			return nil, &UnsupportedError{Part: part(j, blockType(b))}
		}
	}
	return out, nil
}

func toolResultText(j int, content []anthropic.ToolResultBlockParamContentUnion) (string, error) {
	switch {
	case len(content) == 0:
		return "", nil
	case len(content) > 1:
		return "", &UnsupportedError{Part: part(j, fmt.Sprintf("a tool_result of %d blocks (the store keeps one text)", len(content)))}
	case content[0].OfText == nil:
		return "", &UnsupportedError{Part: part(j, "a tool_result holding "+deref(content[0].GetType()))}
	}
	return content[0].OfText.Text, nil
}

func assistantToStore(out []store.NewMessage, blocks []anthropic.ContentBlockParamUnion, toolNames map[string]string) ([]store.NewMessage, error) {
	m := store.NewMessage{Role: store.RoleAssistant}
	var reasoning []json.RawMessage
	var thoughts []string
	texts := 0
	for j, b := range blocks {
		switch {
		case b.OfThinking != nil || b.OfRedactedThinking != nil:
			raw, err := json.Marshal(b)
			if err != nil {
				return nil, fmt.Errorf("anthropic: encode %s block: %w", blockType(b), err)
			}
			reasoning = append(reasoning, raw)
			if b.OfThinking != nil {
				thoughts = append(thoughts, b.OfThinking.Thinking)
			}
		case b.OfText != nil:
			if texts++; texts > 1 {
				return nil, &UnsupportedError{Part: part(j, "a second text block (the store keeps one)")}
			}
			m.Content = b.OfText.Text
		case b.OfToolUse != nil:
			args, err := inputJSON(b.OfToolUse.Input)
			if err != nil {
				return nil, &UnsupportedError{Part: part(j, "tool_use input that is not JSON: "+err.Error())}
			}
			toolNames[b.OfToolUse.ID] = b.OfToolUse.Name
			m.ToolCalls = append(m.ToolCalls, store.ToolCall{ID: b.OfToolUse.ID, Name: b.OfToolUse.Name, Arguments: args})
		default:
			return nil, &UnsupportedError{Part: part(j, blockType(b))}
		}
	}
	if len(reasoning) > 0 {
		details, err := json.Marshal(reasoning)
		if err != nil {
			return nil, fmt.Errorf("anthropic: encode reasoning: %w", err)
		}
		m.ReasoningDetails = string(details)
		m.Reasoning = strings.Join(thoughts, "\n\n")
	}
	return append(out, m), nil
}

// inputJSON is a tool_use input as JSON text: verbatim for a
// json.RawMessage (what FromStore gives back), encoded otherwise.
func inputJSON(input any) (string, error) {
	if raw, ok := input.(json.RawMessage); ok {
		if !json.Valid(raw) {
			return "", fmt.Errorf("invalid JSON")
		}
		return string(raw), nil
	}
	b, err := json.Marshal(input)
	return string(b), err
}

// checkLossless converts out back and refuses the input when that does
// not give msgs again, naming the first field lost.
func checkLossless(msgs []anthropic.MessageParam, out []store.NewMessage) error {
	stored := make([]store.Message, len(out))
	for i, n := range out {
		stored[i] = store.Message{Role: n.Role, Content: n.Content, ToolName: n.ToolName, ToolCallID: n.ToolCallID,
			ToolCalls: n.ToolCalls, Reasoning: n.Reasoning, ReasoningDetails: n.ReasoningDetails}
	}
	back, err := FromStore(stored)
	if err != nil {
		return err
	}
	want, err := json.Marshal(msgs)
	if err != nil {
		return fmt.Errorf("anthropic: encode messages: %w", err)
	}
	got, err := json.Marshal(back)
	if err != nil {
		return fmt.Errorf("anthropic: encode messages: %w", err)
	}
	// NewToolResultBlock writes is_error: false; a literal leaves it out.
	path, err := jsondiff.First(want, got, jsondiff.Default{Key: "is_error", Value: false})
	if err != nil || path == "" {
		return err
	}
	return lossAt(path)
}

// lossAt turns a jsondiff path ("[2].content[0].cache_control") into an
// *UnsupportedError for message 2.
func lossAt(path string) error {
	e := &UnsupportedError{Part: path}
	if n, rest, ok := jsondiff.SplitIndex(path); ok {
		e.Message, e.Part = n, rest
	}
	if e.Part == "" {
		e.Part = "its shape (the store would give it back as another sequence of messages)"
	}
	return e
}

func part(j int, what string) string { return fmt.Sprintf("content[%d] (%s)", j, what) }

func blockType(b anthropic.ContentBlockParamUnion) string {
	if t := deref(b.GetType()); t != "" {
		return t
	}
	return "an empty block"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
