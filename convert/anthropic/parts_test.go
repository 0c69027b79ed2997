package anthropic_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	convert "github.com/sessiondb/sessiondb/convert/anthropic"
	"github.com/sessiondb/sessiondb/store"
)

const (
	png    = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	pdfB64 = "JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PC9UeXBlL0NhdGFsb2c+PgplbmRvYmoK"
)

// toolResult is a tool_result block as a gateway builds it, is_error
// written only when set (NewToolResultBlock writes false, which means the
// same as its absence).
func toolResult(id string, isError bool, content ...anthropic.ToolResultBlockParamContentUnion) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: id, Content: content}
	if isError {
		r.IsError = anthropic.Bool(true)
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
}

func resultText(s string) anthropic.ToolResultBlockParamContentUnion {
	return anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: s}}
}

func titled(b anthropic.ContentBlockParamUnion, title string) anthropic.ContentBlockParamUnion {
	b.OfDocument.Title = anthropic.String(title)
	return b
}

// partsCases are Anthropic messages the store keeps as ordered parts, each
// with the messages ToStore gives.
func partsCases() []struct {
	name string
	in   []anthropic.MessageParam
	want []store.NewMessage
} {
	base64Image := anthropic.NewImageBlockBase64("image/png", png)
	urlImage := anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: "https://example.com/cat.jpg"})
	return []struct {
		name string
		in   []anthropic.MessageParam
		want []store.NewMessage
	}{
		{"ImageBase64", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is this?"), base64Image)},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartText, Text: "What is this?"},
				{Type: store.PartImage, MediaType: "image/png", URL: "data:image/png;base64," + png}}}}},
		{"ImageURL", []anthropic.MessageParam{anthropic.NewUserMessage(urlImage, anthropic.NewTextBlock("And this?"))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/*", URL: "https://example.com/cat.jpg"},
				{Type: store.PartText, Text: "And this?"}}}}},
		{"ImageFile", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewImageBlock(anthropic.FileImageSourceParam{FileID: "file_011CNha8iCJcU1wXNR6q4V8w"}))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/*", BlobID: "file_011CNha8iCJcU1wXNR6q4V8w"}}}}},
		{"DocumentPDF", []anthropic.MessageParam{anthropic.NewUserMessage(titled(anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: pdfB64}), "report.pdf"),
			anthropic.NewTextBlock("Summarise it."))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile, MediaType: "application/pdf", URL: "data:application/pdf;base64," + pdfB64, Name: "report.pdf"},
				{Type: store.PartText, Text: "Summarise it."}}}}},
		{"DocumentPDFURL", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewDocumentBlock(anthropic.URLPDFSourceParam{URL: "https://example.com/a.pdf"}))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile, MediaType: "application/pdf", URL: "https://example.com/a.pdf"}}}}},
		{"DocumentPlainText", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewDocumentBlock(anthropic.PlainTextSourceParam{Data: "Grass is green. Café."}))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile, MediaType: "text/plain", URL: "data:text/plain;base64,R3Jhc3MgaXMgZ3JlZW4uIENhZsOpLg=="}}}}},
		{"DocumentFile", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewDocumentBlock(anthropic.FileDocumentSourceParam{FileID: "file_1"}))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile, MediaType: "application/octet-stream", BlobID: "file_1"}}}}},
		{"TextAndToolUseInterleaved", []anthropic.MessageParam{anthropic.NewAssistantMessage(
			anthropic.NewThinkingBlock(signature, "Two lookups."),
			anthropic.NewTextBlock("First the weather."),
			anthropic.NewToolUseBlock("toolu_1", json.RawMessage(`{"city": "Paris"}`), "weather"),
			anthropic.NewTextBlock("Then the time."),
			anthropic.NewToolUseBlock("toolu_2", json.RawMessage(`{"tz":"Europe/Paris"}`), "clock"))},
			[]store.NewMessage{{Role: store.RoleAssistant, Reasoning: "Two lookups.",
				ReasoningDetails: `[{"signature":"` + signature + `","thinking":"Two lookups.","type":"thinking"}]`,
				Parts: []store.Part{{Type: store.PartText, Text: "First the weather."},
					{Type: store.PartToolUse, ToolCallID: "toolu_1", Name: "weather", Input: `{"city": "Paris"}`},
					{Type: store.PartText, Text: "Then the time."},
					{Type: store.PartToolUse, ToolCallID: "toolu_2", Name: "clock", Input: `{"tz":"Europe/Paris"}`}}}}},
		{"InterleavedThinking", []anthropic.MessageParam{anthropic.NewAssistantMessage(
			anthropic.NewThinkingBlock(signature, "The weather first."),
			anthropic.NewToolUseBlock("toolu_1", json.RawMessage(`{"city": "Paris"}`), "weather"),
			anthropic.NewThinkingBlock(signature2, "Now the clock."),
			anthropic.NewRedactedThinkingBlock(redacted),
			anthropic.NewToolUseBlock("toolu_2", json.RawMessage(`{"tz":"Europe/Paris"}`), "clock"),
			anthropic.NewTextBlock("Asked both."))},
			[]store.NewMessage{{Role: store.RoleAssistant, Reasoning: "The weather first.\n\nNow the clock.",
				Parts: []store.Part{
					{Type: store.PartReasoning, Text: "The weather first.", Data: `{"signature":"` + signature + `","thinking":"The weather first.","type":"thinking"}`},
					{Type: store.PartToolUse, ToolCallID: "toolu_1", Name: "weather", Input: `{"city": "Paris"}`},
					{Type: store.PartReasoning, Text: "Now the clock.", Data: `{"signature":"` + signature2 + `","thinking":"Now the clock.","type":"thinking"}`},
					{Type: store.PartReasoning, Data: `{"data":"` + redacted + `","type":"redacted_thinking"}`},
					{Type: store.PartToolUse, ToolCallID: "toolu_2", Name: "clock", Input: `{"tz":"Europe/Paris"}`},
					{Type: store.PartText, Text: "Asked both."}}}}},
		{"ThinkingAfterText", []anthropic.MessageParam{anthropic.NewAssistantMessage(anthropic.NewTextBlock("a"), anthropic.NewThinkingBlock(signature, "t"))},
			[]store.NewMessage{{Role: store.RoleAssistant, Reasoning: "t", Parts: []store.Part{{Type: store.PartText, Text: "a"},
				{Type: store.PartReasoning, Text: "t", Data: `{"signature":"` + signature + `","thinking":"t","type":"thinking"}`}}}}},
		{"ToolUseBeforeText", []anthropic.MessageParam{anthropic.NewAssistantMessage(
			anthropic.NewToolUseBlock("toolu_1", json.RawMessage(`{}`), "now"), anthropic.NewTextBlock("Asked the clock."))},
			[]store.NewMessage{{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartToolUse, ToolCallID: "toolu_1", Name: "now", Input: `{}`},
				{Type: store.PartText, Text: "Asked the clock."}}}}},
		{"ToolResults", []anthropic.MessageParam{
			anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_1", json.RawMessage(`{}`), "ls"),
				anthropic.NewToolUseBlock("toolu_2", json.RawMessage(`{}`), "cat"), anthropic.NewToolUseBlock("toolu_3", json.RawMessage(`{}`), "shot")),
			anthropic.NewUserMessage(
				toolResult("toolu_1", false, resultText("a.txt")),
				toolResult("toolu_2", true, resultText("cat: b.txt: No such file")),
				toolResult("toolu_3", false, resultText("the screen:"), anthropic.ToolResultBlockParamContentUnion{OfImage: base64Image.OfImage}),
				anthropic.NewTextBlock("Go on."), urlImage)},
			[]store.NewMessage{
				{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "toolu_1", Name: "ls", Arguments: `{}`},
					{ID: "toolu_2", Name: "cat", Arguments: `{}`}, {ID: "toolu_3", Name: "shot", Arguments: `{}`}}},
				{Role: store.RoleTool, ToolCallID: "toolu_1", ToolName: "ls", Content: "a.txt"},
				{Role: store.RoleTool, ToolCallID: "toolu_2", ToolName: "cat",
					Parts: []store.Part{{Type: store.PartToolResult, ToolCallID: "toolu_2", Text: "cat: b.txt: No such file", IsError: true}}},
				{Role: store.RoleTool, ToolCallID: "toolu_3", ToolName: "shot", Parts: []store.Part{
					{Type: store.PartToolResult, ToolCallID: "toolu_3", Text: "the screen:"},
					{Type: store.PartImage, MediaType: "image/png", URL: "data:image/png;base64," + png}}},
				{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartText, Text: "Go on."},
					{Type: store.PartImage, MediaType: "image/*", URL: "https://example.com/cat.jpg"}}},
			}},
		{"ToolErrorEmpty", []anthropic.MessageParam{anthropic.NewUserMessage(toolResult("toolu_1", true))},
			[]store.NewMessage{{Role: store.RoleTool, ToolCallID: "toolu_1", Parts: []store.Part{{Type: store.PartToolResult, ToolCallID: "toolu_1", IsError: true}}}}},
		{"TwoTexts", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("one"), anthropic.NewTextBlock("two"))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartText, Text: "one"}, {Type: store.PartText, Text: "two"}}}}},
		{"SystemBlocks", []anthropic.MessageParam{{OfSystem: &anthropic.SystemMessageParam{Content: []anthropic.TextBlockParam{{Text: "a"}, {Text: "b"}}}}},
			[]store.NewMessage{{Role: store.RoleSystem, Parts: []store.Part{{Type: store.PartText, Text: "a"}, {Type: store.PartText, Text: "b"}}}}},
	}
}

// Every case converts to the parts named, and back — the way the store
// returns them — to the same request on the wire.
func TestParts(t *testing.T) {
	for _, tt := range slices.Concat(partsCases(), attributesCases()) {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convert.ToStore(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ToStore (-want +got):\n%s", diff)
			}
			out, err := convert.FromStore(asReturned(got))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wire(t, tt.in), wire(t, out)); diff != "" {
				t.Errorf("round trip, as sent (-sent +rebuilt):\n%s", diff)
			}
		})
	}
}

// The same cases through a real SQLite store: images, documents, tool
// errors and the order of text and tool calls survive the file.
func TestPartsRoundTripThroughStore(t *testing.T) {
	for _, tt := range slices.Concat(partsCases(), attributesCases()) {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := convert.ToStore(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			out, err := convert.FromStore(throughStore(t, msgs))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wire(t, tt.in), wire(t, out)); diff != "" {
				t.Errorf("round trip, as sent (-sent +rebuilt):\n%s", diff)
			}
		})
	}
}

// The store's plain text of a message with parts is what search and
// string callers see: the text and tool results, images left out.
func TestPartsPlainText(t *testing.T) {
	got, err := convert.ToStore(partsCases()[0].in)
	if err != nil {
		t.Fatal(err)
	}
	if s := asReturned(got)[0].Content; s != "What is this?" {
		t.Errorf("plain text = %q, want the text part alone", s)
	}
}

// Parts written by another provider's converter come back as the blocks
// Anthropic takes: an OpenAI image's detail has no Anthropic field and is
// left out, a percent-encoded data: URL is sent as base64, text parts with
// flat ToolCalls (an OpenAI Responses turn) give text then tool_use.
func TestFromStore_ForeignParts(t *testing.T) {
	in := []store.Message{
		{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/*", URL: "https://example.com/a.png", Detail: "high"},
			{Type: store.PartImage, MediaType: "image/svg+xml", URL: "data:image/svg+xml,%3Csvg%2F%3E"}}},
		{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartText, Text: "Checking."}},
			ToolCalls: []store.ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}},
		{Role: store.RoleTool, ToolCallID: "call_1", Parts: []store.Part{{Type: store.PartText, Text: "one"}, {Type: store.PartText, Text: "two"}}},
	}
	want := []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: "https://example.com/a.png"}),
			anthropic.NewImageBlockBase64("image/svg+xml", "PHN2Zy8+")),
		anthropic.NewAssistantMessage(anthropic.NewTextBlock("Checking."), anthropic.NewToolUseBlock("call_1", json.RawMessage(`{"a":1}`), "f")),
		anthropic.NewUserMessage(toolResult("call_1", false, resultText("one"), resultText("two"))),
	}
	out, err := convert.FromStore(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, want), wire(t, out)); diff != "" {
		t.Errorf("FromStore (-want +got):\n%s", diff)
	}
}

// A reasoning part another provider wrote (an OpenAI reasoning item)
// cannot be sent to Anthropic and is left out; its item ids have no
// Anthropic field either. The blocks around it keep their order.
func TestFromStore_ForeignReasoningPart(t *testing.T) {
	in := []store.Message{{Role: store.RoleAssistant, Parts: []store.Part{
		{Type: store.PartReasoning, Data: `{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA"}`, ItemID: "rs_1"},
		{Type: store.PartText, Text: "Checking.", ItemID: "msg_1"},
		{Type: store.PartToolUse, ToolCallID: "call_1", Name: "f", Input: `{}`, ItemID: "fc_1"}}}}
	want := []anthropic.MessageParam{anthropic.NewAssistantMessage(anthropic.NewTextBlock("Checking."),
		anthropic.NewToolUseBlock("call_1", json.RawMessage(`{}`), "f"))}
	out, err := convert.FromStore(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, want), wire(t, out)); diff != "" {
		t.Errorf("FromStore (-want +got):\n%s", diff)
	}
}

// What Anthropic cannot take is an error naming it, not a silent drop.
func TestFromStore_RefusesParts(t *testing.T) {
	tests := []struct {
		name string
		m    store.Message
		says string
	}{
		{"WordFile", store.Message{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile,
			MediaType: "application/msword", URL: "data:application/msword;base64,AAAA"}}}, "application/msword"},
		{"FileURLNotPDF", store.Message{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile,
			MediaType: "text/csv", URL: "https://example.com/a.csv"}}}, "PDFs only"},
		{"ImageInSystem", store.Message{Role: store.RoleSystem, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/png", URL: "https://x/a.png"}}}, "system"},
		{"ToolUseFromUser", store.Message{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartToolUse, ToolCallID: "t", Name: "f"}}}, "tool_use"},
		{"ToolResultFromAssistant", store.Message{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartToolResult, ToolCallID: "t"}}}, "tool_result"},
		{"ToolUseInToolResult", store.Message{Role: store.RoleTool, ToolCallID: "t", Parts: []store.Part{{Type: store.PartToolUse, ToolCallID: "t", Name: "f"}}}, "tool result"},
		{"ReasoningFromUser", store.Message{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartReasoning, Data: `{"type":"thinking"}`}}}, "reasoning"},
		{"ReasoningInToolResult", store.Message{Role: store.RoleTool, ToolCallID: "t", Parts: []store.Part{{Type: store.PartReasoning, Data: `{"type":"thinking"}`}}}, "tool result"},
		{"BadReasoningData", store.Message{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartReasoning, Data: `"a string"`}}}, "reasoning details"},
		{"BadInput", store.Message{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartToolUse, ToolCallID: "t", Name: "f", Input: "{"}}}, "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := convert.FromStore([]store.Message{tt.m})
			if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("FromStore = %+v, %v; want ErrInvalidInput saying %q", out, err, tt.says)
			}
		})
	}
}
