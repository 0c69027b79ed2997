package openai_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	convert "github.com/sessiondb/sessiondb/convert/openai"
	"github.com/sessiondb/sessiondb/store"
)

var allFields = cmp.Exporter(func(reflect.Type) bool { return true })

// args has spacing and key order a model produced; it must come back as is.
const args = `{"city": "Paris",  "units":"metric"}`

func assistantWithCalls(content string, calls ...openai.ChatCompletionMessageToolCallUnionParam) openai.ChatCompletionMessageParamUnion {
	a := openai.ChatCompletionAssistantMessageParam{ToolCalls: calls}
	if content != "" {
		a.Content.OfString = openai.String(content)
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

func functionCall(id, name, arguments string) openai.ChatCompletionMessageToolCallUnionParam {
	return openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
		ID: id, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: name, Arguments: arguments}}}
}

func chatConversation() []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You are terse."),
		openai.UserMessage("Weather in Paris and Rome?"),
		assistantWithCalls("", functionCall("call_1", "get_weather", args), functionCall("call_2", "get_weather", `{"city":"Rome"}`)),
		openai.ToolMessage(`{"temp":18}`, "call_1"),
		openai.ToolMessage(`{"temp":24}`, "call_2"),
		assistantWithCalls("Paris 18°C, Rome 24°C."),
	}
}

func TestChatToStore(t *testing.T) {
	got, err := convert.ChatToStore(chatConversation())
	if err != nil {
		t.Fatal(err)
	}
	want := []store.NewMessage{
		{Role: store.RoleSystem, Content: "You are terse."},
		{Role: store.RoleUser, Content: "Weather in Paris and Rome?"},
		{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: args},
			{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Rome"}`}}},
		{Role: store.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: `{"temp":18}`},
		{Role: store.RoleTool, ToolCallID: "call_2", ToolName: "get_weather", Content: `{"temp":24}`},
		{Role: store.RoleAssistant, Content: "Paris 18°C, Rome 24°C."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ChatToStore (-want +got):\n%s", diff)
	}
}

// OpenAI chat → a real SQLite store → OpenAI chat gives the same params.
func TestChatRoundTripThroughStore(t *testing.T) {
	in := chatConversation()
	msgs, err := convert.ChatToStore(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := convert.ChatFromStore(throughStore(t, msgs))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out, allFields); diff != "" {
		t.Errorf("round trip (-sent +rebuilt):\n%s", diff)
	}
	if got := out[2].OfAssistant.ToolCalls[0].OfFunction.Function.Arguments; got != args {
		t.Errorf("arguments after the round trip = %q, want %q byte-exact", got, args)
	}
}

func TestChatToStore_Refuses(t *testing.T) {
	named := openai.UserMessage("hi")
	named.OfUser.Name = openai.String("alice")
	refusal := assistantWithCalls("")
	refusal.OfAssistant.Refusal = openai.String("I can't help with that.")
	refusalPart := openai.ChatCompletionAssistantMessageParam{Content: openai.ChatCompletionAssistantMessageParamContentUnion{
		OfArrayOfContentParts: []openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{
			{OfRefusal: &openai.ChatCompletionContentPartRefusalParam{Refusal: "no"}}}}}
	withAudio := assistantWithCalls("hi")
	withAudio.OfAssistant.Audio.ID = "audio_1"
	file := func(f openai.ChatCompletionContentPartFileFileParam) []openai.ChatCompletionMessageParamUnion {
		return []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.FileContentPart(f)})}
	}
	tests := []struct {
		name    string
		msgs    []openai.ChatCompletionMessageParamUnion
		message int
		part    string
	}{
		{"AudioFormat", []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x"), openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: "ZkxhQw==", Format: "flac"})})}, 1, "content[0] (audio of format \"flac\")"},
		{"FileDataNotDataURL", file(openai.ChatCompletionContentPartFileFileParam{FileData: openai.String("JVBERi0x")}), 0, "data: URL"},
		{"FileDataAndID", file(openai.ChatCompletionContentPartFileFileParam{FileData: openai.String("data:application/pdf;base64,JVBE"), FileID: openai.String("file-1")}), 0, "one of"},
		{"ImageNoURL", []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{})})}, 0, "content[0]"},
		{"Developer", []openai.ChatCompletionMessageParamUnion{openai.DeveloperMessage("be terse")}, 0, "developer"},
		{"Name", []openai.ChatCompletionMessageParamUnion{named}, 0, "name"},
		{"Refusal", []openai.ChatCompletionMessageParamUnion{refusal}, 0, "refusal"},
		{"RefusalPart", []openai.ChatCompletionMessageParamUnion{{OfAssistant: &refusalPart}}, 0, "refusal"},
		{"Audio", []openai.ChatCompletionMessageParamUnion{withAudio}, 0, "audio"},
		{"CustomToolCall", []openai.ChatCompletionMessageParamUnion{assistantWithCalls("", openai.ChatCompletionMessageToolCallUnionParam{
			OfCustom: &openai.ChatCompletionMessageCustomToolCallParam{ID: "c", Custom: openai.ChatCompletionMessageCustomToolCallCustomParam{Name: "sql", Input: "SELECT 1"}}})}, 0, "custom"},
		{"NoRole", []openai.ChatCompletionMessageParamUnion{{}}, 0, "no role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convert.ChatToStore(tt.msgs)
			var u *convert.UnsupportedError
			if !errors.Is(err, store.ErrInvalidInput) || !errors.As(err, &u) {
				t.Fatalf("ChatToStore = %+v, %v; want an *UnsupportedError matching ErrInvalidInput", got, err)
			}
			if u.Message != tt.message || !strings.Contains(u.Part, tt.part) {
				t.Errorf("refused message %d, part %q; want message %d, a part naming %q", u.Message, u.Part, tt.message, tt.part)
			}
		})
	}
}
