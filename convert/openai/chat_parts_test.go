package openai_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	convert "github.com/sessiondb/sessiondb/convert/openai"
	"github.com/sessiondb/sessiondb/store"
)

const (
	jpegB64 = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHR8eHR0aHBwg"
	pdfB64  = "JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PC9UeXBlL0NhdGFsb2c+PgplbmRvYmoK"
	wavB64  = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAESsAACJWAAACABAAZGF0YQAAAAA="
)

func userParts(parts ...openai.ChatCompletionContentPartUnionParam) openai.ChatCompletionMessageParamUnion {
	return openai.UserMessage(parts)
}

// chatPartsCases are chat messages the store keeps as parts, each with the
// messages ChatToStore gives.
func chatPartsCases() []struct {
	name string
	in   []openai.ChatCompletionMessageParamUnion
	want []store.NewMessage
} {
	assistantParts := openai.ChatCompletionAssistantMessageParam{
		Content: openai.ChatCompletionAssistantMessageParamContentUnion{OfArrayOfContentParts: []openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{
			{OfText: &openai.ChatCompletionContentPartTextParam{Text: "Looking it up."}}}},
		ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{functionCall("call_1", "search", args)}}
	return []struct {
		name string
		in   []openai.ChatCompletionMessageParamUnion
		want []store.NewMessage
	}{
		{"ImageURLWithDetail", []openai.ChatCompletionMessageParamUnion{userParts(openai.TextContentPart("What is this?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "https://example.com/cat.png", Detail: "high"}))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartText, Text: "What is this?"},
				{Type: store.PartImage, MediaType: "image/*", URL: "https://example.com/cat.png", Detail: "high"}}}}},
		{"ImageBase64", []openai.ChatCompletionMessageParamUnion{userParts(
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/jpeg;base64," + jpegB64}))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/jpeg", URL: "data:image/jpeg;base64," + jpegB64}}}}},
		{"InputAudio", []openai.ChatCompletionMessageParamUnion{userParts(
			openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: wavB64, Format: "wav"}))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile, MediaType: "audio/wav", URL: "data:audio/wav;base64," + wavB64}}}}},
		{"FileData", []openai.ChatCompletionMessageParamUnion{userParts(openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
			FileData: openai.String("data:application/pdf;base64," + pdfB64), Filename: openai.String("report.pdf")}), openai.TextContentPart("Summarise."))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile, MediaType: "application/pdf", URL: "data:application/pdf;base64," + pdfB64, Name: "report.pdf"},
				{Type: store.PartText, Text: "Summarise."}}}}},
		{"FileID", []openai.ChatCompletionMessageParamUnion{userParts(openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{FileID: openai.String("file-6F2ksmvXxt4VdoqmHRw6kL")}))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile, MediaType: "application/octet-stream", BlobID: "file-6F2ksmvXxt4VdoqmHRw6kL"}}}}},
		{"TextPartsKeptAsParts", []openai.ChatCompletionMessageParamUnion{userParts(openai.TextContentPart("hi"))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartText, Text: "hi"}}}}},
		{"SystemTextParts", []openai.ChatCompletionMessageParamUnion{openai.SystemMessage([]openai.ChatCompletionContentPartTextParam{{Text: "a"}, {Text: "b"}})},
			[]store.NewMessage{{Role: store.RoleSystem, Parts: []store.Part{{Type: store.PartText, Text: "a"}, {Type: store.PartText, Text: "b"}}}}},
		{"AssistantPartsAndCalls", []openai.ChatCompletionMessageParamUnion{{OfAssistant: &assistantParts},
			openai.ToolMessage([]openai.ChatCompletionContentPartTextParam{{Text: "result one"}, {Text: "result two"}}, "call_1")},
			[]store.NewMessage{
				{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartText, Text: "Looking it up."},
					{Type: store.PartToolUse, ToolCallID: "call_1", Name: "search", Input: args}}},
				{Role: store.RoleTool, ToolCallID: "call_1", ToolName: "search", Parts: []store.Part{
					{Type: store.PartToolResult, ToolCallID: "call_1", Text: "result one"}, {Type: store.PartText, Text: "result two"}}},
			}},
	}
}

// Every case converts to the parts named, and back — the way the store
// returns them — to the same request on the wire.
func TestChatParts(t *testing.T) {
	for _, tt := range chatPartsCases() {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convert.ChatToStore(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ChatToStore (-want +got):\n%s", diff)
			}
			out, err := convert.ChatFromStore(asReturned(got))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wire(t, tt.in), wire(t, out)); diff != "" {
				t.Errorf("round trip, as sent (-sent +rebuilt):\n%s", diff)
			}
		})
	}
}

// The same cases through a real SQLite store.
func TestChatPartsRoundTripThroughStore(t *testing.T) {
	for _, tt := range chatPartsCases() {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := convert.ChatToStore(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			out, err := convert.ChatFromStore(throughStore(t, msgs))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wire(t, tt.in), wire(t, out)); diff != "" {
				t.Errorf("round trip, as sent (-sent +rebuilt):\n%s", diff)
			}
		})
	}
}

// Parts another provider wrote come back as chat takes them: an Anthropic
// turn's text and tool_use interleaved give the text parts then the calls;
// a tool error's is_error, which chat has no field for, is left out.
func TestChatFromStore_ForeignParts(t *testing.T) {
	in := []store.Message{
		{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartText, Text: "First."},
			{Type: store.PartToolUse, ToolCallID: "toolu_1", Name: "f", Input: `{}`}, {Type: store.PartText, Text: "Then."}}},
		{Role: store.RoleTool, ToolCallID: "toolu_1", Parts: []store.Part{{Type: store.PartToolResult, ToolCallID: "toolu_1", Text: "boom", IsError: true}}},
	}
	a := openai.ChatCompletionAssistantMessageParam{
		Content: openai.ChatCompletionAssistantMessageParamContentUnion{OfArrayOfContentParts: []openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{
			{OfText: &openai.ChatCompletionContentPartTextParam{Text: "First."}}, {OfText: &openai.ChatCompletionContentPartTextParam{Text: "Then."}}}},
		ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{functionCall("toolu_1", "f", `{}`)}}
	want := []openai.ChatCompletionMessageParamUnion{{OfAssistant: &a},
		openai.ToolMessage([]openai.ChatCompletionContentPartTextParam{{Text: "boom"}}, "toolu_1")}
	out, err := convert.ChatFromStore(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, want), wire(t, out)); diff != "" {
		t.Errorf("ChatFromStore (-want +got):\n%s", diff)
	}
}

// A message the store would refuse is refused by ChatToStore already, with
// the store's error: an image at a relative URL.
func TestChatToStore_InvalidPart(t *testing.T) {
	got, err := convert.ChatToStore([]openai.ChatCompletionMessageParamUnion{userParts(
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "cat.png"}))})
	var u *convert.UnsupportedError
	if !errors.Is(err, store.ErrInvalidInput) || errors.As(err, &u) || !strings.Contains(err.Error(), "absolute URL") {
		t.Errorf("ChatToStore = %+v, %v; want the store's ErrInvalidInput naming the URL", got, err)
	}
}

// What chat completions cannot take is an error naming it.
func TestChatFromStore_RefusesParts(t *testing.T) {
	tests := []struct {
		name string
		m    store.Message
		says string
	}{
		{"ImageByBlobID", store.Message{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/*", BlobID: "file_1"}}}, "blob id"},
		{"FileByURL", store.Message{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartFile, MediaType: "application/pdf", URL: "https://example.com/a.pdf"}}}, "file by URL"},
		{"ImageInSystem", store.Message{Role: store.RoleSystem, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/png", URL: "https://x/a.png"}}}, "system"},
		{"ImageInToolResult", store.Message{Role: store.RoleTool, ToolCallID: "t", Parts: []store.Part{{Type: store.PartToolResult, ToolCallID: "t"},
			{Type: store.PartImage, MediaType: "image/png", URL: "https://x/a.png"}}}, "tool message"},
		{"ImageFromAssistant", store.Message{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/png", URL: "https://x/a.png"}}}, "assistant"},
		{"ToolUseFromUser", store.Message{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartToolUse, ToolCallID: "t", Name: "f"}}}, "tool_use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := convert.ChatFromStore([]store.Message{tt.m})
			if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("ChatFromStore = %+v, %v; want ErrInvalidInput saying %q", out, err, tt.says)
			}
		})
	}
}

// A chat completion's choice is kept with the model that wrote it and its
// finish reason; its tool calls byte-exact.
func TestChatCompletionToStore(t *testing.T) {
	var c openai.ChatCompletion
	if err := json.Unmarshal([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1764590000,"model":"gpt-4.1-2025-04-14",
		"choices":[{"index":0,"finish_reason":"tool_calls","logprobs":null,"message":{"role":"assistant","content":null,"refusal":null,"annotations":[],
		"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]}}],
		"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`), &c); err != nil {
		t.Fatal(err)
	}
	got, err := convert.ChatCompletionToStore(&c, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := store.NewMessage{Role: store.RoleAssistant, Model: "gpt-4.1-2025-04-14", FinishReason: "tool_calls",
		ToolCalls: []store.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Paris"}`}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ChatCompletionToStore (-want +got):\n%s", diff)
	}

	var refused openai.ChatCompletion
	if err := json.Unmarshal([]byte(`{"model":"gpt-4.1","choices":[{"index":0,"finish_reason":"stop",
		"message":{"role":"assistant","content":null,"refusal":"I can't help with that."}}]}`), &refused); err != nil {
		t.Fatal(err)
	}
	var u *convert.UnsupportedError
	if got, err := convert.ChatCompletionToStore(&refused, 0); !errors.As(err, &u) || u.Part != "refusal" {
		t.Errorf("ChatCompletionToStore(a refusal) = %+v, %v; want an *UnsupportedError naming the refusal", got, err)
	}
	if _, err := convert.ChatCompletionToStore(&c, 1); !errors.Is(err, store.ErrInvalidInput) {
		t.Errorf("ChatCompletionToStore(choice 1 of 1) = %v, want ErrInvalidInput", err)
	}
}
