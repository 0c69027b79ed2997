package openai

import (
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
