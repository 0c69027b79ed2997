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

// The status an output message is sent back with: the store keeps only
// finished messages (an item of another status is refused).
const messageCompleted = responses.ResponseOutputMessageStatusCompleted

// outputMessageParts is an output message (an assistant message as the
// API returned it) as text parts carrying its item id.
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
		parts = append(parts, store.Part{Type: store.PartText, Text: c.OfOutputText.Text, ItemID: m.ID})
	}
	return parts, nil
}

// outputMessages rebuilds the output messages of an assistant message's
// text parts that carry item ids (consecutive parts of one id are one
// message); nil when none carries one, the message then being its Content.
// A text part with no id among them is an easy input message of its own.
func outputMessages(parts []store.Part) responses.ResponseInputParam {
	var out responses.ResponseInputParam
	withIDs := false
	lastID := ""
	for _, p := range parts {
		if p.Type != store.PartText {
			continue
		}
		withIDs = withIDs || p.ItemID != ""
		text := responses.ResponseOutputMessageContentUnionParam{OfOutputText: &responses.ResponseOutputTextParam{
			Text: p.Text, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}}
		switch {
		case p.ItemID == "":
			out = append(out, responses.ResponseInputItemParamOfMessage(p.Text, responses.EasyInputMessageRoleAssistant))
		case p.ItemID == lastID:
			m := out[len(out)-1].OfOutputMessage
			m.Content = append(m.Content, text)
		default:
			out = append(out, responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
				ID: p.ItemID, Status: messageCompleted, Content: []responses.ResponseOutputMessageContentUnionParam{text}}})
		}
		lastID = p.ItemID
	}
	if !withIDs {
		return nil
	}
	return out
}
