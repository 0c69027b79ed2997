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
// order (the package documentation gives the mapping). It refuses (an
// *UnsupportedError) a message holding anything the store does not model,
// after checking that converting the result back gives the input again.
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
	for i := range out {
		if err := out[i].Validate(); err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
	}
	return out, nil
}

// systemToStore keeps a system message of one text block as Content, of
// several (or of one with a cache_control breakpoint) as text Parts.
func systemToStore(out []store.NewMessage, m *anthropic.SystemMessageParam) ([]store.NewMessage, error) {
	n := store.NewMessage{Role: store.RoleSystem}
	for j := range m.Content {
		p, err := blockToPart(j, anthropic.ContentBlockParamUnion{OfText: &m.Content[j]}, false)
		if err != nil {
			return nil, err
		}
		n.Parts = append(n.Parts, p)
	}
	if len(n.Parts) == 1 && n.Parts[0].Attributes == "" {
		n.Content, n.Parts = n.Parts[0].Text, nil
	}
	return append(out, n), nil
}

// userToStore gives each tool_result block its RoleTool message, and the
// other blocks (text, images, documents) one RoleUser message: Content
// alone for a single text block, Parts otherwise.
func userToStore(out []store.NewMessage, blocks []anthropic.ContentBlockParamUnion, toolNames map[string]string) ([]store.NewMessage, error) {
	var parts []store.Part
	flush := func() {
		switch {
		case len(parts) == 1 && parts[0].Type == store.PartText && parts[0].Attributes == "":
			out = append(out, store.NewMessage{Role: store.RoleUser, Content: parts[0].Text})
		case len(parts) > 0:
			out = append(out, store.NewMessage{Role: store.RoleUser, Parts: parts})
		}
		parts = nil
	}
	for j, b := range blocks {
		if r := b.OfToolResult; r != nil {
			flush()
			n, err := toolResultToStore(j, r, toolNames[r.ToolUseID])
			if err != nil {
				return nil, err
			}
			out = append(out, n)
			continue
		}
		p, err := blockToPart(j, b, false)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	flush()
	return out, nil
}

// toolResultToStore is a tool_result block as a RoleTool message: Content
// alone for a result of one text block (or none) and nothing else; else
// Parts, a tool_result part first (its is_error and cache_control, and the
// first block's text when that is text of no attributes), then the
// result's other blocks.
func toolResultToStore(j int, r *anthropic.ToolResultBlockParam, toolName string) (store.NewMessage, error) {
	n := store.NewMessage{Role: store.RoleTool, ToolCallID: r.ToolUseID, ToolName: toolName}
	attrs, err := attributesOf(anthropic.ContentBlockParamUnion{OfToolResult: r})
	if err != nil {
		return n, err
	}
	var parts []store.Part
	for _, c := range r.Content {
		b := anthropic.ContentBlockParamUnion{OfText: c.OfText, OfImage: c.OfImage, OfDocument: c.OfDocument}
		if b.OfText == nil && b.OfImage == nil && b.OfDocument == nil {
			return n, &UnsupportedError{Part: part(j, "a tool_result holding "+deref(c.GetType()))}
		}
		p, err := blockToPart(j, b, false)
		if err != nil {
			return n, err
		}
		parts = append(parts, p)
	}
	plainText := len(parts) > 0 && parts[0].Type == store.PartText && parts[0].Attributes == ""
	if attrs == "" && !r.IsError.Value && (len(parts) == 0 || len(parts) == 1 && plainText) {
		if len(parts) == 1 {
			n.Content = parts[0].Text
		}
		return n, nil
	}
	head := store.Part{Type: store.PartToolResult, ToolCallID: r.ToolUseID, IsError: r.IsError.Value, Attributes: attrs}
	if plainText {
		head.Text, parts = parts[0].Text, parts[1:]
	}
	n.Parts = append([]store.Part{head}, parts...)
	return n, nil
}

// assistantToStore keeps an assistant message's leading thinking blocks in
// ReasoningDetails and the rest as Content and ToolCalls when that is its
// shape (one text, then tool calls), as ordered Parts otherwise. Thinking
// after other content (interleaved thinking between tool calls) makes every
// block a part, each thinking block a store.PartReasoning holding its JSON,
// so the order the API checks survives.
func assistantToStore(out []store.NewMessage, blocks []anthropic.ContentBlockParamUnion, toolNames map[string]string) ([]store.NewMessage, error) {
	m := store.NewMessage{Role: store.RoleAssistant}
	interleaved := thinkingAfterContent(blocks)
	var reasoning []json.RawMessage
	var thoughts []string
	var parts []store.Part
	for j, b := range blocks {
		if b.OfThinking != nil || b.OfRedactedThinking != nil {
			raw, err := json.Marshal(b)
			if err != nil {
				return nil, fmt.Errorf("anthropic: encode %s block: %w", blockType(b), err)
			}
			var thought string
			if b.OfThinking != nil {
				thought = b.OfThinking.Thinking
				thoughts = append(thoughts, thought)
			}
			if interleaved {
				parts = append(parts, store.Part{Type: store.PartReasoning, Data: string(raw), Text: thought})
			} else {
				reasoning = append(reasoning, raw)
			}
			continue
		}
		p, err := blockToPart(j, b, true)
		if err != nil {
			return nil, err
		}
		if p.Type == store.PartToolUse {
			toolNames[p.ToolCallID] = p.Name
		}
		parts = append(parts, p)
	}
	if !interleaved && textThenCalls(parts) {
		for _, p := range parts {
			if p.Type == store.PartText {
				m.Content = p.Text
			} else {
				m.ToolCalls = append(m.ToolCalls, store.ToolCall{ID: p.ToolCallID, Name: p.Name, Arguments: p.Input})
			}
		}
	} else {
		m.Parts = parts
	}
	if len(reasoning) > 0 {
		details, err := json.Marshal(reasoning)
		if err != nil {
			return nil, fmt.Errorf("anthropic: encode reasoning: %w", err)
		}
		m.ReasoningDetails = string(details)
	}
	m.Reasoning = strings.Join(thoughts, "\n\n")
	return append(out, m), nil
}

// thinkingAfterContent reports whether a thinking or redacted_thinking
// block comes after a block of another kind.
func thinkingAfterContent(blocks []anthropic.ContentBlockParamUnion) bool {
	content := false
	for _, b := range blocks {
		thinking := b.OfThinking != nil || b.OfRedactedThinking != nil
		if thinking && content {
			return true
		}
		content = content || !thinking
	}
	return false
}

// textThenCalls reports whether parts are at most one text, first, then
// tool calls, none with attributes: the shape Content and ToolCalls hold
// without Parts.
func textThenCalls(parts []store.Part) bool {
	for k, p := range parts {
		if p.Attributes != "" || p.Type != store.PartToolUse && (p.Type != store.PartText || k > 0) {
			return false
		}
	}
	return true
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
	back, err := FromStore(asStored(out))
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

// asStored is what the store returns for messages appended as ns, for a
// conversion's check of itself (store.NewMessage.Stored).
func asStored(ns []store.NewMessage) []store.Message {
	out := make([]store.Message, len(ns))
	for i, n := range ns {
		out[i] = n.Stored()
	}
	return out
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
