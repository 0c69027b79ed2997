package openai

import (
	"fmt"
	"strings"

	"github.com/sessiondb/sessiondb/internal/dataurl"
	"github.com/sessiondb/sessiondb/store"
)

// The media types given to references whose OpenAI value names none: an
// image by URL or file id, a file by URL or file id.
const (
	anyImage = "image/*"
	anyFile  = "application/octet-stream"
)

// The audio formats chat completions take inline, by media type.
var audioFormats = map[string]string{"audio/wav": "wav", "audio/mpeg": "mp3"}

// imagePart is an image by URL (a data: URL carries it inline, and its
// media type) or by file id (in BlobID).
func imagePart(url, fileID, detail string) (store.Part, error) {
	p := store.Part{Type: store.PartImage, MediaType: anyImage, Detail: detail}
	switch {
	case (url == "") == (fileID == ""):
		return p, &UnsupportedError{Part: "an image with other than one of a URL and a file id"}
	case fileID != "":
		p.BlobID = fileID
	default:
		p.URL = url
		if d, ok := dataurl.Parse(url); ok && d.MediaType != "" {
			p.MediaType = bareType(d.MediaType)
		}
	}
	return p, nil
}

// filePart is a file as inline data (a data: URL, which names its media
// type), a URL or a file id, with its file name.
func filePart(data, fileID, url, name string) (store.Part, error) {
	p := store.Part{Type: store.PartFile, MediaType: anyFile, Name: name}
	set := 0
	for _, v := range []string{data, fileID, url} {
		if v != "" {
			set++
		}
	}
	if set != 1 {
		return p, &UnsupportedError{Part: "a file with other than one of file_data, file_id and file_url"}
	}
	switch {
	case data != "":
		d, ok := dataurl.Parse(data)
		if !ok || d.MediaType == "" {
			return p, &UnsupportedError{Part: "file_data that is not a data: URL with a media type"}
		}
		p.MediaType, p.URL = bareType(d.MediaType), data
	case fileID != "":
		p.BlobID = fileID
	default:
		p.URL = url
	}
	return p, nil
}

// bareType is a media type without its parameters.
func bareType(mediaType string) string {
	t, _, _ := strings.Cut(mediaType, ";")
	return t
}

// toolResultParts is a tool output of several parts as the store keeps a
// tool result: a tool_result part holding the first text, then the rest.
func toolResultParts(callID string, parts []store.Part) []store.Part {
	head := store.Part{Type: store.PartToolResult, ToolCallID: callID}
	if len(parts) > 0 && parts[0].Type == store.PartText {
		head.Text, parts = parts[0].Text, parts[1:]
	}
	return append([]store.Part{head}, parts...)
}

// resultContent is a RoleTool message's parts as the output's content:
// a leading tool_result part's text first (its is_error has no OpenAI
// field and is left out), then the other parts.
func resultContent(parts []store.Part) []store.Part {
	if len(parts) == 0 || parts[0].Type != store.PartToolResult {
		return parts
	}
	var out []store.Part
	if parts[0].Text != "" {
		out = append(out, store.Part{Type: store.PartText, Text: parts[0].Text})
	}
	return append(out, parts[1:]...)
}

// assistantCalls is an assistant message's tool calls: its tool_use parts,
// or its ToolCalls when its parts hold none.
func assistantCalls(m store.Message) []store.ToolCall {
	var calls []store.ToolCall
	for _, p := range m.Parts {
		if p.Type == store.PartToolUse {
			calls = append(calls, store.ToolCall{ID: p.ToolCallID, Name: p.Name, Arguments: p.Input, ItemID: p.ItemID})
		}
	}
	if len(calls) == 0 {
		return m.ToolCalls
	}
	return calls
}

func partError(where string, p store.Part) error {
	return fmt.Errorf("a %s part in %s: %w", p.Type, where, store.ErrInvalidInput)
}
