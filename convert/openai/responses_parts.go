package openai

import (
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/sessiondb/sessiondb/store"
)

// inputPart is one part of a user or system message's content list.
func inputPart(c responses.ResponseInputContentUnionParam) (store.Part, error) {
	switch {
	case c.OfInputText != nil:
		return store.Part{Type: store.PartText, Text: c.OfInputText.Text}, nil
	case c.OfInputImage != nil:
		img := c.OfInputImage
		return imagePart(img.ImageURL.Value, img.FileID.Value, string(img.Detail))
	case c.OfInputFile != nil:
		f := c.OfInputFile
		return filePart(f.FileData.Value, f.FileID.Value, f.FileURL.Value, f.Filename.Value)
	}
	return store.Part{}, &UnsupportedError{Part: "a " + typeOf(c.GetType()) + " part"}
}

// outputItemPart is one part of a function call output's list.
func outputItemPart(c responses.ResponseFunctionCallOutputItemUnionParam) (store.Part, error) {
	switch {
	case c.OfInputText != nil:
		return store.Part{Type: store.PartText, Text: c.OfInputText.Text}, nil
	case c.OfInputImage != nil:
		img := c.OfInputImage
		return imagePart(img.ImageURL.Value, img.FileID.Value, string(img.Detail))
	case c.OfInputFile != nil:
		f := c.OfInputFile
		return filePart(f.FileData.Value, f.FileID.Value, f.FileURL.Value, f.Filename.Value)
	}
	return store.Part{}, &UnsupportedError{Part: "a " + typeOf(c.GetType()) + " part"}
}

// inputContent is parts as a message's content list.
func inputContent(parts []store.Part) (responses.ResponseInputMessageContentListParam, error) {
	out := make(responses.ResponseInputMessageContentListParam, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case store.PartText:
			out = append(out, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: p.Text}})
		case store.PartImage:
			img := &responses.ResponseInputImageParam{Detail: responses.ResponseInputImageDetail(p.Detail)}
			img.ImageURL, img.FileID = optional(p.URL), optional(p.BlobID)
			out = append(out, responses.ResponseInputContentUnionParam{OfInputImage: img})
		case store.PartFile:
			f := &responses.ResponseInputFileParam{Filename: optional(p.Name), FileID: optional(p.BlobID)}
			f.FileData, f.FileURL = fileURL(p.URL)
			out = append(out, responses.ResponseInputContentUnionParam{OfInputFile: f})
		default:
			return nil, partError("a message", p)
		}
	}
	return out, nil
}

// outputContent is parts as a function call output's list.
func outputContent(parts []store.Part) (responses.ResponseFunctionCallOutputItemListParam, error) {
	out := make(responses.ResponseFunctionCallOutputItemListParam, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case store.PartText:
			out = append(out, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: p.Text}})
		case store.PartImage:
			img := &responses.ResponseInputImageContentParam{Detail: responses.ResponseInputImageContentDetail(p.Detail)}
			img.ImageURL, img.FileID = optional(p.URL), optional(p.BlobID)
			out = append(out, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: img})
		case store.PartFile:
			f := &responses.ResponseInputFileContentParam{Filename: optional(p.Name), FileID: optional(p.BlobID)}
			f.FileData, f.FileURL = fileURL(p.URL)
			out = append(out, responses.ResponseFunctionCallOutputItemUnionParam{OfInputFile: f})
		default:
			return nil, partError("a function call output", p)
		}
	}
	return out, nil
}

// fileURL sends a data: URL as file_data, any other as file_url.
func fileURL(u string) (data, url param.Opt[string]) {
	if strings.HasPrefix(u, "data:") {
		return openai.String(u), url
	}
	return data, optional(u)
}

func optional(s string) param.Opt[string] {
	if s == "" {
		return param.Opt[string]{}
	}
	return openai.String(s)
}

// The status an output message is sent back with when its parts' attributes
// name none: the status of a finished message.
const messageCompleted = responses.ResponseOutputMessageStatusCompleted

// outputMessageParts is an output message (an assistant message as the
// API returned it) as text parts carrying its item id, and in their
// Attributes its phase, a status other than completed and each text's
// annotations and logprobs.
func outputMessageParts(m *responses.ResponseOutputMessageParam) ([]store.Part, error) {
	if m.ID == "" {
		return nil, &UnsupportedError{Part: "an output message with no id (send assistant text without one as an easy input message)"}
	}
	if len(m.Content) == 0 {
		return nil, &UnsupportedError{Part: "an output message with no content"}
	}
	parts := make([]store.Part, 0, len(m.Content))
	for j, c := range m.Content {
		switch {
		case c.OfRefusal != nil:
			return nil, &UnsupportedError{Part: fmt.Sprintf("content[%d] (a refusal: the store has no refusals)", j)}
		case c.OfOutputText == nil:
			return nil, &UnsupportedError{Part: fmt.Sprintf("content[%d] (an empty part)", j)}
		}
		a := textAttributes{Phase: string(m.Phase), Annotations: c.OfOutputText.Annotations, Logprobs: c.OfOutputText.Logprobs}
		if m.Status != messageCompleted {
			a.Status = string(m.Status)
		}
		attrs, err := a.encode()
		if err != nil {
			return nil, err
		}
		parts = append(parts, store.Part{Type: store.PartText, Text: c.OfOutputText.Text, ItemID: m.ID, Attributes: attrs})
	}
	return parts, nil
}

// outputMessages rebuilds the output messages of an assistant message's
// text parts that carry item ids (consecutive parts of one id are one
// message, of the first one's phase and status); nil when none carries an
// id or OpenAI attributes, the message then being its Content. A text part
// with no id among them is an easy input message of its own, with its
// phase.
func outputMessages(parts []store.Part) (responses.ResponseInputParam, error) {
	var out responses.ResponseInputParam
	items := false
	lastID := ""
	for _, p := range parts {
		if p.Type != store.PartText {
			continue
		}
		a, err := partAttributes(p)
		if err != nil {
			return nil, err
		}
		items = items || p.ItemID != "" || !a.empty()
		annotations := a.Annotations
		if annotations == nil {
			annotations = []responses.ResponseOutputTextAnnotationUnionParam{} // the API wants the list
		}
		text := responses.ResponseOutputMessageContentUnionParam{OfOutputText: &responses.ResponseOutputTextParam{
			Text: p.Text, Annotations: annotations, Logprobs: a.Logprobs}}
		switch {
		case p.ItemID == "":
			if !a.onlyPhase() {
				return nil, fmt.Errorf("assistant text with a status, annotations or logprobs but no item id (an output message needs one): %w", store.ErrInvalidInput)
			}
			easy := responses.ResponseInputItemParamOfMessage(p.Text, responses.EasyInputMessageRoleAssistant)
			easy.OfMessage.Phase = responses.EasyInputMessagePhase(a.Phase)
			out = append(out, easy)
		case p.ItemID == lastID:
			m := out[len(out)-1].OfOutputMessage
			m.Content = append(m.Content, text)
		default:
			status := responses.ResponseOutputMessageStatus(a.Status)
			if status == "" {
				status = messageCompleted
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
				ID: p.ItemID, Status: status, Phase: responses.ResponseOutputMessagePhase(a.Phase),
				Content: []responses.ResponseOutputMessageContentUnionParam{text}}})
		}
		lastID = p.ItemID
	}
	if !items {
		return nil, nil
	}
	return out, nil
}
