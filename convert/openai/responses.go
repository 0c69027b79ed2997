package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/sessiondb/sessiondb/store"
)

// turnPhase is how far an assistant turn of Responses items has got: its
// reasoning items come first, then its message, then its function calls.
type turnPhase int

const (
	noTurn turnPhase = iota
	inReasoning
	inMessage
	inCalls
)

// ResponsesToStore converts Responses API input items into messages to
// append, in order: the reasoning items, assistant message and function
// calls of one model turn become one assistant message. It refuses (an
// *UnsupportedError) an item holding anything the store cannot keep, after
// checking that converting the result back gives the input again.
func ResponsesToStore(items responses.ResponseInputParam) ([]store.NewMessage, error) {
	c := responsesConverter{toolNames: map[string]string{}}
	for i, it := range items {
		if err := c.add(it); err != nil {
			if u, ok := err.(*UnsupportedError); ok {
				u.Message = i
			}
			return nil, err
		}
	}
	if err := c.closeTurn(); err != nil {
		return nil, err
	}
	back, err := ResponsesFromStore(asStored(c.out))
	if err != nil {
		return nil, err
	}
	if err := losslessJSON(items, back); err != nil {
		return nil, err
	}
	return validated(c.out)
}

type responsesConverter struct {
	out       []store.NewMessage
	turn      *store.NewMessage // the assistant turn being gathered
	phase     turnPhase
	reasoning []json.RawMessage
	thoughts  []string
	toolNames map[string]string // call id → function name
}

func (c *responsesConverter) add(it responses.ResponseInputItemUnionParam) error {
	switch {
	case it.OfReasoning != nil:
		if c.phase > inReasoning {
			if err := c.closeTurn(); err != nil {
				return err
			}
		}
		raw, err := json.Marshal(it.OfReasoning)
		if err != nil {
			return fmt.Errorf("openai: encode reasoning item: %w", err)
		}
		c.openTurn(inReasoning)
		c.reasoning = append(c.reasoning, raw)
		for _, s := range it.OfReasoning.Summary {
			c.thoughts = append(c.thoughts, s.Text)
		}
	case it.OfMessage != nil && it.OfMessage.Role == responses.EasyInputMessageRoleAssistant:
		if it.OfMessage.Content.OfInputItemContentList != nil {
			return &UnsupportedError{Part: "content (an assistant message of input parts: the API takes assistant text as a string)"}
		}
		if c.phase >= inMessage {
			if err := c.closeTurn(); err != nil {
				return err
			}
		}
		c.openTurn(inMessage)
		text := it.OfMessage.Content.OfString.Value
		if phase := it.OfMessage.Phase; phase != "" {
			// Only a part has room for the phase.
			attrs, err := textAttributes{Phase: string(phase)}.encode()
			if err != nil {
				return err
			}
			c.turn.Parts = []store.Part{{Type: store.PartText, Text: text, Attributes: attrs}}
		} else {
			c.turn.Content = text
		}
	case it.OfOutputMessage != nil:
		parts, err := outputMessageParts(it.OfOutputMessage)
		if err != nil {
			return err
		}
		if c.phase >= inMessage {
			if err := c.closeTurn(); err != nil {
				return err
			}
		}
		c.openTurn(inMessage)
		c.turn.Parts = parts
	case it.OfFunctionCall != nil:
		f := it.OfFunctionCall
		c.openTurn(inCalls)
		c.toolNames[f.CallID] = f.Name
		c.turn.ToolCalls = append(c.turn.ToolCalls, store.ToolCall{ID: f.CallID, Name: f.Name, Arguments: f.Arguments, ItemID: f.ID.Value})
	case it.OfMessage != nil:
		return c.message(string(it.OfMessage.Role), it.OfMessage.Content.OfString.Value, it.OfMessage.Content.OfInputItemContentList)
	case it.OfInputMessage != nil:
		return c.message(it.OfInputMessage.Role, "", it.OfInputMessage.Content)
	case it.OfFunctionCallOutput != nil:
		o := it.OfFunctionCallOutput
		if err := c.closeTurn(); err != nil {
			return err
		}
		n := store.NewMessage{Role: store.RoleTool, ToolCallID: o.CallID.Value,
			ToolName: c.toolNames[o.CallID.Value], Content: o.Output.OfString.Value}
		if list := o.Output.OfResponseFunctionCallOutputItemArray; list != nil {
			var parts []store.Part
			for j, item := range list {
				p, err := outputItemPart(item)
				if err != nil {
					return inContent("output", j, err)
				}
				parts = append(parts, p)
			}
			n.Parts = toolResultParts(o.CallID.Value, parts)
		}
		c.out = append(c.out, n)
	default:
		return &UnsupportedError{Part: "a " + typeOf(it.GetType()) + " item"}
	}
	return nil
}

// message adds a user or system message: text, or content parts.
func (c *responsesConverter) message(role, text string, content responses.ResponseInputMessageContentListParam) error {
	r := map[string]store.Role{"user": store.RoleUser, "system": store.RoleSystem}[role]
	if r == "" {
		return &UnsupportedError{Part: fmt.Sprintf("the %q role (the store has system, user, assistant, tool)", role)}
	}
	if err := c.closeTurn(); err != nil {
		return err
	}
	n := store.NewMessage{Role: r, Content: text}
	for j, item := range content {
		p, err := inputPart(item)
		if err != nil {
			return inContent("content", j, err)
		}
		n.Parts = append(n.Parts, p)
	}
	c.out = append(c.out, n)
	return nil
}

// inContent names the content part an *UnsupportedError is about.
func inContent(field string, j int, err error) error {
	if u, ok := err.(*UnsupportedError); ok {
		u.Part = fmt.Sprintf("%s[%d] (%s)", field, j, u.Part)
	}
	return err
}

// openTurn starts an assistant turn unless one is open, and moves it to
// phase.
func (c *responsesConverter) openTurn(phase turnPhase) {
	if c.turn == nil {
		c.turn = &store.NewMessage{Role: store.RoleAssistant}
	}
	c.phase = phase
}

// closeTurn appends the assistant turn being gathered, if any.
func (c *responsesConverter) closeTurn() error {
	if c.turn == nil {
		return nil
	}
	if len(c.reasoning) > 0 {
		details, err := json.Marshal(c.reasoning)
		if err != nil {
			return fmt.Errorf("openai: encode reasoning: %w", err)
		}
		c.turn.ReasoningDetails = string(details)
		c.turn.Reasoning = strings.Join(c.thoughts, "\n\n")
	}
	c.out = append(c.out, *c.turn)
	c.turn, c.phase, c.reasoning, c.thoughts = nil, noTurn, nil, nil
	return nil
}

// ResponsesFromStore converts stored messages into Responses API input
// items, in order: an assistant message gives its reasoning items (byte
// for byte as they were given), its message, then its function calls.
func ResponsesFromStore(ms []store.Message) (responses.ResponseInputParam, error) {
	out := responses.ResponseInputParam{}
	for _, m := range ms {
		switch m.Role {
		case store.RoleSystem, store.RoleUser:
			role := map[store.Role]responses.EasyInputMessageRole{store.RoleSystem: responses.EasyInputMessageRoleSystem,
				store.RoleUser: responses.EasyInputMessageRoleUser}[m.Role]
			if m.Parts == nil {
				out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, role))
				break
			}
			content, err := inputContent(m.Parts)
			if err != nil {
				return nil, fmt.Errorf("openai: message %d: %w", m.ID, err)
			}
			out = append(out, responses.ResponseInputItemParamOfMessage(content, role))
		case store.RoleTool:
			item := responses.ResponseInputItemParamOfFunctionCallOutput(m.Content)
			if m.Parts != nil {
				list, err := outputContent(resultContent(m.Parts))
				if err != nil {
					return nil, fmt.Errorf("openai: message %d: %w", m.ID, err)
				}
				item = responses.ResponseInputItemParamOfFunctionCallOutput(list)
			}
			item.OfFunctionCallOutput.CallID = openai.String(m.ToolCallID)
			out = append(out, item)
		case store.RoleAssistant:
			items, err := assistantItems(m)
			if err != nil {
				return nil, fmt.Errorf("openai: message %d: %w", m.ID, err)
			}
			out = append(out, items...)
		case store.RoleNote: // a note is nobody's words: never given to the model
		default:
			return nil, fmt.Errorf("openai: message %d: role %q: %w", m.ID, m.Role, store.ErrInvalidInput)
		}
	}
	return out, nil
}

// assistantItems is an assistant message as one model turn's items: its
// reasoning (ReasoningDetails, then any reasoning parts holding an OpenAI
// item), its message, then its function calls, each with its item id.
func assistantItems(m store.Message) (responses.ResponseInputParam, error) {
	out, err := reasoningItems(m.ReasoningDetails)
	if err != nil {
		return nil, err
	}
	for _, p := range m.Parts {
		switch p.Type {
		case store.PartReasoning:
			items, err := reasoningItems(p.Data)
			if err != nil {
				return nil, err
			}
			out = append(out, items...)
		case store.PartText, store.PartToolUse:
		default:
			return nil, partError("an assistant message (the API takes assistant text)", p)
		}
	}
	calls := assistantCalls(m)
	messages, err := outputMessages(m.Parts)
	if err != nil {
		return nil, err
	}
	if messages != nil {
		out = append(out, messages...)
	} else if m.Content != "" || (len(out) == 0 && len(calls) == 0) {
		// With parts, Content is their text: the store fills it.
		out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleAssistant))
	}
	for _, c := range calls {
		item := responses.ResponseInputItemParamOfFunctionCall(c.Arguments, c.ID, c.Name)
		item.OfFunctionCall.ID = optional(c.ItemID)
		out = append(out, item)
	}
	return out, nil
}

// reasoningItems rebuilds the reasoning items kept in details (a JSON
// array, or one object: a reasoning part's Data); another provider's
// blocks are left out.
func reasoningItems(details string) ([]responses.ResponseInputItemUnionParam, error) {
	if details == "" {
		return nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(details), &raws); err != nil {
		if !json.Valid([]byte(details)) {
			return nil, fmt.Errorf("reasoning details are not JSON: %w", store.ErrInvalidInput)
		}
		raws = []json.RawMessage{json.RawMessage(details)}
	}
	var out []responses.ResponseInputItemUnionParam
	for _, raw := range raws {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &head) != nil || head.Type != "reasoning" {
			continue
		}
		var item responses.ResponseReasoningItemParam
		if err := json.Unmarshal(raw, &item); err != nil {
			return nil, fmt.Errorf("reasoning item: %v: %w", err, store.ErrInvalidInput)
		}
		out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: &item})
	}
	return out, nil
}
