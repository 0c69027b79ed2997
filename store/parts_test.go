package store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Each bad part or field gets ErrInvalidInput naming what is wrong; each
// good one is accepted.
func TestNewMessageValidate_Shape(t *testing.T) {
	img := Part{Type: PartImage, MediaType: "image/png", URL: "https://example.com/a.png"}
	for _, tc := range []struct {
		name string
		m    NewMessage
		want string // "" = accepted; else a piece of the error
	}{
		{"text part", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "hi"}}}, ""},
		{"image by url", NewMessage{Role: RoleUser, Parts: []Part{img}}, ""},
		{"image as data url", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartImage, MediaType: "image/png", URL: "data:image/png;base64,iVBORw0KGgo="}}}, ""},
		{"file by blob id", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartFile, MediaType: "application/pdf", BlobID: "b1", Name: "a.pdf"}}}, ""},
		{"tool use", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartToolUse, ToolCallID: "c1", Name: "grep", Input: `{"q":"x"}`}}}, ""},
		{"tool result", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartToolResult, ToolCallID: "c1", Text: "out", IsError: true}}}, ""},
		{"reasoning part", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartReasoning, Data: `{"type":"thinking","thinking":"hm","signature":"c2ln"}`, Text: "hm"}}}, ""},
		{"reasoning without data", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartReasoning, Text: "hm"}}}, "data is not JSON"},
		{"reasoning data not json", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartReasoning, Data: "{"}}}, "data is not JSON"},
		{"data on a text part", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "x", Data: "{}"}}}, "has data"},
		{"item id on any part", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "x", ItemID: "msg_1"}, {Type: PartToolUse, ToolCallID: "call_1", Name: "f", ItemID: "fc_1"}}}, ""},
		{"item id invalid utf-8", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "x", ItemID: "\xff"}}}, "item id is not valid UTF-8"},
		{"attributes on any part", NewMessage{Role: RoleAssistant, Parts: []Part{
			{Type: PartText, Text: "x", Attributes: `{"phase":"commentary"}`},
			{Type: PartImage, MediaType: "image/png", URL: "https://x/y", Attributes: `{"cache_control":{"type":"ephemeral"}}`},
			{Type: PartFile, MediaType: "application/pdf", BlobID: "b", Attributes: `{"citations":{"enabled":true}}`},
			{Type: PartToolUse, ToolCallID: "c1", Name: "f", Attributes: `{}`},
			{Type: PartToolResult, ToolCallID: "c1", Attributes: ` { "a" : [1] } `},
			{Type: PartReasoning, Data: `{}`, Attributes: `{"x":null}`}}}, ""},
		{"attributes an array", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "x", Attributes: `[{"phase":"commentary"}]`}}}, "attributes are not a JSON object"},
		{"attributes null", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "x", Attributes: `null`}}}, "attributes are not a JSON object"},
		{"attributes a string", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "x", Attributes: `"phase"`}}}, "attributes are not a JSON object"},
		{"attributes not json", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "x", Attributes: `{"phase":`}}}, "attributes are not a JSON object"},
		{"attributes invalid utf-8", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "x", Attributes: "{\"a\":\"\xff\"}"}}}, "attributes is not valid UTF-8"},
		{"unknown type", NewMessage{Role: RoleUser, Parts: []Part{{Type: "video"}}}, `type "video" is not one of`},
		{"image without media type", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartImage, URL: "https://x/y"}}}, "is not a MIME type"},
		{"image with url and blob", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartImage, MediaType: "image/png", URL: "https://x/y", BlobID: "b"}}}, "exactly one of a URL and a blob id"},
		{"image with neither", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartImage, MediaType: "image/png"}}}, "exactly one of a URL and a blob id"},
		{"relative url", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartImage, MediaType: "image/png", URL: "a.png"}}}, "not an absolute URL"},
		{"text part with a url", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "x", URL: "https://x"}}}, "has url, which a text part does not carry"},
		{"image with a name", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartImage, MediaType: "image/png", URL: "https://x/y", Name: "n"}}}, "has name"},
		{"tool use without name", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartToolUse, ToolCallID: "c1"}}}, "needs a tool call id and a name"},
		{"tool use input not json", NewMessage{Role: RoleAssistant, Parts: []Part{{Type: PartToolUse, ToolCallID: "c1", Name: "n", Input: "{"}}}, "input is not JSON"},
		{"tool result without id", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartToolResult, Text: "x"}}}, "needs the tool call id"},
		{"invalid utf-8 text", NewMessage{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "\xff"}}}, "not valid UTF-8"},
		{"tool calls disagree with parts", NewMessage{Role: RoleAssistant,
			Parts:     []Part{{Type: PartToolUse, ToolCallID: "c1", Name: "a"}},
			ToolCalls: []ToolCall{{ID: "c2", Name: "a"}}}, "differ from the tool_use parts"},
		{"tool calls agree with parts", NewMessage{Role: RoleAssistant,
			Parts:     []Part{{Type: PartToolUse, ToolCallID: "c1", Name: "a"}},
			ToolCalls: []ToolCall{{ID: "c1", Name: "a"}}}, ""},
		{"too many parts", NewMessage{Role: RoleUser, Parts: make([]Part, MaxParts+1)}, "more than 4096"},
		{"metadata object", NewMessage{Role: RoleUser, Metadata: `{"a":1}`}, ""},
		{"metadata array", NewMessage{Role: RoleUser, Metadata: `[1]`}, "metadata is not a JSON object"},
		{"metadata null", NewMessage{Role: RoleUser, Metadata: `null`}, "metadata is not a JSON object"},
		{"metadata not json", NewMessage{Role: RoleUser, Metadata: `{`}, "metadata is not a JSON object"},
		{"created at given", NewMessage{Role: RoleUser, CreatedAt: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}, ""},
		{"created before 1970", NewMessage{Role: RoleUser, CreatedAt: time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)}, "before 1970"},
		{"created an hour ahead (a fast clock)", NewMessage{Role: RoleUser, CreatedAt: time.Now().Add(time.Hour)}, ""},
		{"created two days ahead", NewMessage{Role: RoleUser, CreatedAt: time.Now().Add(48 * time.Hour)}, "more than 24h0m0s ahead"},
		{"created in year 9999", NewMessage{Role: RoleUser, CreatedAt: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}, "ahead of this machine's clock"},
		{"model too long", NewMessage{Role: RoleUser, Model: strings.Repeat("m", 1025)}, "model longer than"},
		{"platform id invalid utf-8", NewMessage{Role: RoleUser, PlatformMessageID: "\xfe"}, "platform message id is not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatalf("accepted; want an error with %q", tc.want)
			case !errors.Is(err, ErrInvalidInput):
				t.Fatalf("%v does not match ErrInvalidInput", err)
			case !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// A message given as parts gets its plain text and its flat tool calls
// filled in, without touching the caller's value.
func TestNormalizeParts(t *testing.T) {
	in := NewMessage{Role: RoleAssistant, Parts: []Part{
		{Type: PartText, Text: "Looking."},
		{Type: PartImage, MediaType: "image/png", BlobID: "b1"},
		{Type: PartReasoning, Data: `{"type":"thinking"}`, Text: "not plain text"},
		{Type: PartToolUse, ToolCallID: "c1", Name: "grep", Input: `{"q":"x"}`, ItemID: "fc_1"},
		{Type: PartToolResult, ToolCallID: "c0", Text: "3 hits"},
	}}
	got := in
	normalizeParts(&got)
	if diff := cmp.Diff("Looking.\n3 hits", got.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ToolCall{{ID: "c1", Name: "grep", Arguments: `{"q":"x"}`, ItemID: "fc_1"}}, got.ToolCalls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if in.Content != "" || in.ToolCalls != nil {
		t.Errorf("the caller's message changed: %+v", in)
	}
	kept := NewMessage{Role: RoleUser, Content: "mine", Parts: []Part{{Type: PartText, Text: "theirs"}}}
	normalizeParts(&kept)
	if kept.Content != "mine" {
		t.Errorf("a given content was replaced: %q", kept.Content)
	}
}

// Stored is what the store returns: the fields as given, content and
// tool calls filled from the parts, the caller's time to the millisecond.
func TestNewMessageStored(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 678_901_234, time.UTC)
	n := NewMessage{Role: RoleAssistant, Model: "m", Metadata: `{"a":1}`, CreatedAt: at, Parts: []Part{
		{Type: PartText, Text: "hi"}, {Type: PartToolUse, ToolCallID: "c1", Name: "f", Input: "{}"}}}
	want := Message{Role: RoleAssistant, Content: "hi", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}},
		Model: "m", Metadata: `{"a":1}`, CreatedAt: at.Truncate(time.Millisecond), Parts: n.Parts}
	if diff := cmp.Diff(want, n.Stored()); diff != "" {
		t.Errorf("Stored (-want +got):\n%s", diff)
	}
}
