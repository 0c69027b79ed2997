package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/sessiondb/sessiondb/internal/dataurl"
	"github.com/sessiondb/sessiondb/store"
)

// The media types given to references whose Anthropic source names none:
// an image by URL or file id, a document by file id. A document by URL is
// a PDF, the only kind Anthropic fetches.
const (
	anyImage  = "image/*"
	anyFile   = "application/octet-stream"
	mediaPDF  = "application/pdf"
	mediaText = "text/plain"
)

// blockToPart converts one content block of a user or assistant message
// (j is its index, for errors), its cache_control and citations kept in
// the part's Attributes; toolUse says whether a tool_use block may appear
// there.
func blockToPart(j int, b anthropic.ContentBlockParamUnion, toolUse bool) (store.Part, error) {
	p, err := blockContent(j, b, toolUse)
	if err != nil {
		return p, err
	}
	p.Attributes, err = attributesOf(b)
	return p, err
}

// blockContent is the part for block b's content, without its attributes.
func blockContent(j int, b anthropic.ContentBlockParamUnion, toolUse bool) (store.Part, error) {
	switch {
	case b.OfText != nil:
		return store.Part{Type: store.PartText, Text: b.OfText.Text}, nil
	case b.OfImage != nil:
		return imagePart(j, b.OfImage)
	case b.OfDocument != nil:
		return documentPart(j, b.OfDocument)
	case b.OfToolUse != nil && toolUse:
		args, err := inputJSON(b.OfToolUse.Input)
		if err != nil {
			return store.Part{}, &UnsupportedError{Part: part(j, "tool_use input that is not JSON: "+err.Error())}
		}
		return store.Part{Type: store.PartToolUse, ToolCallID: b.OfToolUse.ID, Name: b.OfToolUse.Name, Input: args}, nil
	}
	return store.Part{}, &UnsupportedError{Part: part(j, blockType(b))}
}

// imagePart keeps an image block as a reference: a base64 source as a
// data: URL (the base64 text as sent), a URL as itself, a file as its
// file id in BlobID.
func imagePart(j int, img *anthropic.ImageBlockParam) (store.Part, error) {
	p := store.Part{Type: store.PartImage}
	switch s := img.Source; {
	case s.OfBase64 != nil:
		p.MediaType = string(s.OfBase64.MediaType)
		p.URL = dataurl.Base64(p.MediaType, s.OfBase64.Data)
	case s.OfURL != nil:
		p.MediaType, p.URL = anyImage, s.OfURL.URL
	case s.OfFile != nil:
		p.MediaType, p.BlobID = anyImage, s.OfFile.FileID
	default:
		return p, &UnsupportedError{Part: part(j, "an image with no source")}
	}
	return p, nil
}

// documentPart keeps a document block as a file reference named by its
// title: a base64 PDF or a plain text source as a data: URL (the text
// base64-encoded), a PDF URL as itself, a file as its file id in BlobID.
// A document made of content blocks is not a file and is refused.
func documentPart(j int, d *anthropic.DocumentBlockParam) (store.Part, error) {
	p := store.Part{Type: store.PartFile, Name: d.Title.Value}
	switch s := d.Source; {
	case s.OfBase64 != nil:
		p.MediaType, p.URL = mediaPDF, dataurl.Base64(mediaPDF, s.OfBase64.Data)
	case s.OfText != nil:
		p.MediaType, p.URL = mediaText, dataurl.Base64(mediaText, base64.StdEncoding.EncodeToString([]byte(s.OfText.Data)))
	case s.OfURL != nil:
		p.MediaType, p.URL = mediaPDF, s.OfURL.URL
	case s.OfFile != nil:
		p.MediaType, p.BlobID = anyFile, s.OfFile.FileID
	case s.OfContent != nil:
		return p, &UnsupportedError{Part: part(j, "a document of content blocks (the store keeps files)")}
	default:
		return p, &UnsupportedError{Part: part(j, "a document with no source")}
	}
	return p, nil
}

// partToBlock rebuilds the content block a part stands for, with the
// fields its Attributes keep.
func partToBlock(p store.Part) (anthropic.ContentBlockParamUnion, error) {
	b, err := partContent(p)
	if err != nil {
		return b, err
	}
	return withAttributes(b, p.Attributes)
}

// partContent is the block for part p's content, without its attributes.
func partContent(p store.Part) (anthropic.ContentBlockParamUnion, error) {
	switch p.Type {
	case store.PartText:
		return anthropic.NewTextBlock(p.Text), nil
	case store.PartImage:
		img, err := imageBlock(p)
		return anthropic.ContentBlockParamUnion{OfImage: img}, err
	case store.PartFile:
		doc, err := documentBlock(p)
		return anthropic.ContentBlockParamUnion{OfDocument: doc}, err
	case store.PartToolUse:
		return toolUseBlock(store.ToolCall{ID: p.ToolCallID, Name: p.Name, Arguments: p.Input})
	case store.PartToolResult:
		r := anthropic.ToolResultBlockParam{ToolUseID: p.ToolCallID}
		if p.IsError {
			r.IsError = anthropic.Bool(true)
		}
		if p.Text != "" {
			r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: p.Text}}}
		}
		return anthropic.ContentBlockParamUnion{OfToolResult: &r}, nil
	}
	return anthropic.ContentBlockParamUnion{}, fmt.Errorf("part type %q: %w", p.Type, store.ErrInvalidInput)
}

func toolUseBlock(c store.ToolCall) (anthropic.ContentBlockParamUnion, error) {
	args := c.Arguments
	if args == "" {
		args = "{}" // Anthropic wants an object; no arguments is an empty one
	}
	if !json.Valid([]byte(args)) {
		return anthropic.ContentBlockParamUnion{}, fmt.Errorf("tool call %s: arguments are not JSON: %w", c.ID, store.ErrInvalidInput)
	}
	return anthropic.NewToolUseBlock(c.ID, json.RawMessage(args), c.Name), nil
}

func imageBlock(p store.Part) (*anthropic.ImageBlockParam, error) {
	img := &anthropic.ImageBlockParam{}
	if p.BlobID != "" {
		img.Source.OfFile = &anthropic.FileImageSourceParam{FileID: p.BlobID}
		return img, nil
	}
	d, ok := dataurl.Parse(p.URL)
	if !ok {
		img.Source.OfURL = &anthropic.URLImageSourceParam{URL: p.URL}
		return img, nil
	}
	data, err := d.Base64Data()
	if err != nil {
		return nil, fmt.Errorf("image data: URL: %v: %w", err, store.ErrInvalidInput)
	}
	mediaType := mediaTypeOf(d.MediaType, p.MediaType)
	img.Source.OfBase64 = &anthropic.Base64ImageSourceParam{MediaType: anthropic.Base64ImageSourceMediaType(mediaType), Data: data}
	return img, nil
}

// documentBlock rebuilds a document from a file part: a PDF or plain text
// in a data: URL, a PDF by URL, a file id. Anthropic takes no other kind
// of document, so another media type is an error, not a silent drop.
func documentBlock(p store.Part) (*anthropic.DocumentBlockParam, error) {
	doc := &anthropic.DocumentBlockParam{}
	if p.Name != "" {
		doc.Title = anthropic.String(p.Name)
	}
	if p.BlobID != "" {
		doc.Source.OfFile = &anthropic.FileDocumentSourceParam{FileID: p.BlobID}
		return doc, nil
	}
	d, ok := dataurl.Parse(p.URL)
	if !ok {
		if p.MediaType != mediaPDF && p.MediaType != anyFile {
			return nil, fmt.Errorf("a %s file by URL (Anthropic fetches PDFs only): %w", p.MediaType, store.ErrInvalidInput)
		}
		doc.Source.OfURL = &anthropic.URLPDFSourceParam{URL: p.URL}
		return doc, nil
	}
	switch mediaTypeOf(d.MediaType, p.MediaType) {
	case mediaPDF:
		data, err := d.Base64Data()
		if err != nil {
			return nil, fmt.Errorf("file data: URL: %v: %w", err, store.ErrInvalidInput)
		}
		doc.Source.OfBase64 = &anthropic.Base64PDFSourceParam{Data: data}
	case mediaText:
		s, err := d.Text()
		if err != nil {
			return nil, fmt.Errorf("file data: URL: %v: %w", err, store.ErrInvalidInput)
		}
		doc.Source.OfText = &anthropic.PlainTextSourceParam{Data: s}
	default:
		return nil, fmt.Errorf("a %s file (Anthropic takes PDF and plain text documents): %w", p.MediaType, store.ErrInvalidInput)
	}
	return doc, nil
}

// mediaTypeOf is a data: URL's media type without parameters, or the
// part's when the URL names none.
func mediaTypeOf(fromURL, fromPart string) string {
	if t, _, _ := strings.Cut(fromURL, ";"); t != "" {
		return t
	}
	return fromPart
}

// hasToolUse reports whether parts hold a tool call. An assistant
// message's parts without one (text parts from another provider's
// converter) leave its calls in ToolCalls.
func hasToolUse(parts []store.Part) bool {
	for _, p := range parts {
		if p.Type == store.PartToolUse {
			return true
		}
	}
	return false
}
