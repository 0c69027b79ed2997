package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/sessiondb/sessiondb/internal/dataurl"
	"github.com/sessiondb/sessiondb/store"
)

// ChatToStore converts chat completion message params into messages to
// append, in order. It refuses (an *UnsupportedError) a message holding
// anything the store does not model, after checking that converting the
// result back gives the input again.
func ChatToStore(msgs []openai.ChatCompletionMessageParamUnion) ([]store.NewMessage, error) {
	out := make([]store.NewMessage, 0, len(msgs))
	toolNames := map[string]string{} // call id → function name
	for i, m := range msgs {
		n, err := chatToStore(m, toolNames)
		if err != nil {
			if u, ok := err.(*UnsupportedError); ok {
				u.Message = i
			}
			return nil, err
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
	return validated(out)
}

func chatToStore(m openai.ChatCompletionMessageParamUnion, toolNames map[string]string) (store.NewMessage, error) {
	switch {
	case m.OfSystem != nil:
		n := store.NewMessage{Role: store.RoleSystem, Content: m.OfSystem.Content.OfString.Value}
		for _, p := range m.OfSystem.Content.OfArrayOfContentParts {
			n.Parts = append(n.Parts, store.Part{Type: store.PartText, Text: p.Text})
		}
		return n, nil
	case m.OfUser != nil:
		n := store.NewMessage{Role: store.RoleUser, Content: m.OfUser.Content.OfString.Value}
		for j, p := range m.OfUser.Content.OfArrayOfContentParts {
			part, err := chatPart(p)
			if err != nil {
				return n, inContent("content", j, err)
			}
			n.Parts = append(n.Parts, part)
		}
		return n, nil
	case m.OfAssistant != nil:
		return chatAssistantToStore(m.OfAssistant, toolNames)
	case m.OfTool != nil:
		t := m.OfTool
		n := store.NewMessage{Role: store.RoleTool, ToolCallID: t.ToolCallID, ToolName: toolNames[t.ToolCallID], Content: t.Content.OfString.Value}
		if texts := t.Content.OfArrayOfContentParts; texts != nil {
			var parts []store.Part
			for _, p := range texts {
				parts = append(parts, store.Part{Type: store.PartText, Text: p.Text})
			}
			n.Parts = toolResultParts(t.ToolCallID, parts)
		}
		return n, nil
	case m.OfDeveloper != nil:
		return store.NewMessage{}, &UnsupportedError{Part: "the developer role (the store has system, user, assistant, tool)"}
	case m.OfFunction != nil:
		return store.NewMessage{}, &UnsupportedError{Part: "a function message (deprecated; use tool messages)"}
	}
	return store.NewMessage{}, &UnsupportedError{Part: "a message with no role"}
}

// chatAssistantToStore keeps string content as Content and function calls
// as ToolCalls; content parts are text Parts, followed by the calls as
// tool_use parts.
func chatAssistantToStore(a *openai.ChatCompletionAssistantMessageParam, toolNames map[string]string) (store.NewMessage, error) {
	n := store.NewMessage{Role: store.RoleAssistant, Content: a.Content.OfString.Value}
	for j, p := range a.Content.OfArrayOfContentParts {
		if p.OfText == nil {
			return n, &UnsupportedError{Part: fmt.Sprintf("content[%d] (a refusal part: the store has no refusals)", j)}
		}
		n.Parts = append(n.Parts, store.Part{Type: store.PartText, Text: p.OfText.Text})
	}
	for j, c := range a.ToolCalls {
		if c.OfFunction == nil {
			return n, &UnsupportedError{Part: fmt.Sprintf("tool_calls[%d] (a custom tool call: the store keeps function calls)", j)}
		}
		f := c.OfFunction
		toolNames[f.ID] = f.Function.Name
		if n.Parts != nil {
			n.Parts = append(n.Parts, store.Part{Type: store.PartToolUse, ToolCallID: f.ID, Name: f.Function.Name, Input: f.Function.Arguments})
		} else {
			n.ToolCalls = append(n.ToolCalls, store.ToolCall{ID: f.ID, Name: f.Function.Name, Arguments: f.Function.Arguments})
		}
	}
	return n, nil
}

// chatPart is one part of a user message: text, an image (detail kept),
// inline audio (a data: URL file of audio/wav or audio/mpeg), a file.
func chatPart(p openai.ChatCompletionContentPartUnionParam) (store.Part, error) {
	switch {
	case p.OfText != nil:
		return store.Part{Type: store.PartText, Text: p.OfText.Text}, nil
	case p.OfImageURL != nil:
		img := p.OfImageURL.ImageURL
		return imagePart(img.URL, "", img.Detail)
	case p.OfInputAudio != nil:
		a := p.OfInputAudio.InputAudio
		for mediaType, format := range audioFormats {
			if a.Format == format {
				return store.Part{Type: store.PartFile, MediaType: mediaType, URL: dataurl.Base64(mediaType, a.Data)}, nil
			}
		}
		return store.Part{}, &UnsupportedError{Part: fmt.Sprintf("audio of format %q", a.Format)}
	case p.OfFile != nil:
		f := p.OfFile.File
		return filePart(f.FileData.Value, f.FileID.Value, "", f.Filename.Value)
	}
	return store.Part{}, &UnsupportedError{Part: "a " + typeOf(p.GetType()) + " part"}
}

// ChatFromStore converts stored messages into chat completion message
// params, in order. Reasoning is left out: the chat completions API takes
// none back.
func ChatFromStore(ms []store.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(ms))
	for _, m := range ms {
		if m.Role == store.RoleNote {
			continue // a note is nobody's words: never given to the model
		}
		msg, err := chatFromStore(m)
		if err != nil {
			return nil, fmt.Errorf("openai: message %d: %w", m.ID, err)
		}
		out = append(out, msg)
	}
	return out, nil
}

func chatFromStore(m store.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case store.RoleSystem:
		if m.Parts == nil {
			return openai.SystemMessage(m.Content), nil
		}
		texts, err := textParts("a system message", m.Parts)
		return openai.SystemMessage(texts), err
	case store.RoleUser:
		if m.Parts == nil {
			return openai.UserMessage(m.Content), nil
		}
		parts := make([]openai.ChatCompletionContentPartUnionParam, 0, len(m.Parts))
		for _, p := range m.Parts {
			cp, err := chatContentPart(p)
			if err != nil {
				return openai.ChatCompletionMessageParamUnion{}, err
			}
			parts = append(parts, cp)
		}
		return openai.UserMessage(parts), nil
	case store.RoleTool:
		if m.Parts == nil {
			return openai.ToolMessage(m.Content, m.ToolCallID), nil
		}
		texts, err := textParts("a tool message", resultContent(m.Parts))
		return openai.ToolMessage(texts, m.ToolCallID), err
	case store.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		calls := assistantCalls(m)
		switch {
		case m.Parts != nil:
			for _, p := range m.Parts {
				switch p.Type {
				case store.PartText:
					a.Content.OfArrayOfContentParts = append(a.Content.OfArrayOfContentParts,
						openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{OfText: &openai.ChatCompletionContentPartTextParam{Text: p.Text}})
				case store.PartToolUse, store.PartReasoning: // the calls follow; chat takes no reasoning back
				default:
					return openai.ChatCompletionMessageParamUnion{}, partError("an assistant message", p)
				}
			}
		case m.Content != "" || len(calls) == 0:
			a.Content.OfString = openai.String(m.Content)
		}
		for _, c := range calls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments}}})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("role %q: %w", m.Role, store.ErrInvalidInput)
}

// textParts is parts that must all be text, as chat text parts.
func textParts(where string, parts []store.Part) ([]openai.ChatCompletionContentPartTextParam, error) {
	out := make([]openai.ChatCompletionContentPartTextParam, 0, len(parts))
	for _, p := range parts {
		if p.Type != store.PartText {
			return nil, partError(where+" (chat completions take text there)", p)
		}
		out = append(out, openai.ChatCompletionContentPartTextParam{Text: p.Text})
	}
	return out, nil
}

// chatContentPart is a user message part as chat completions take it: an
// image by URL, inline audio, a file inline or by id.
func chatContentPart(p store.Part) (openai.ChatCompletionContentPartUnionParam, error) {
	switch p.Type {
	case store.PartText:
		return openai.TextContentPart(p.Text), nil
	case store.PartImage:
		if p.BlobID != "" {
			return openai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("an image by blob id (chat completions take images by URL): %w", store.ErrInvalidInput)
		}
		return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: p.URL, Detail: p.Detail}), nil
	case store.PartFile:
		if format, ok := audioFormats[p.MediaType]; ok && p.Name == "" {
			if d, ok := dataurl.Parse(p.URL); ok && d.Base64 {
				return openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: d.Data, Format: format}), nil
			}
		}
		f := openai.ChatCompletionContentPartFileFileParam{}
		if p.Name != "" {
			f.Filename = openai.String(p.Name)
		}
		switch _, inline := dataurl.Parse(p.URL); {
		case p.BlobID != "":
			f.FileID = openai.String(p.BlobID)
		case inline:
			f.FileData = openai.String(p.URL)
		default:
			return openai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("a file by URL (chat completions take files inline or by id): %w", store.ErrInvalidInput)
		}
		return openai.FileContentPart(f), nil
	}
	return openai.ChatCompletionContentPartUnionParam{}, partError("a user message", p)
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
