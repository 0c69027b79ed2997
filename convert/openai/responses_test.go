package openai_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	convert "github.com/sessiondb/sessiondb/convert/openai"
	"github.com/sessiondb/sessiondb/store"
)

const encrypted = "gAAAAABoX2c1r8vN3+Qw/Zk1bYpLx0Uu5Jj7Hh2Tt4eS6fG9aA0dD1cC2bB3=="

func reasoningItem(id, summary string) responses.ResponseInputItemUnionParam {
	it := responses.ResponseInputItemParamOfReasoning(id, []responses.ResponseReasoningItemSummaryParam{{Text: summary}})
	it.OfReasoning.EncryptedContent = openai.String(encrypted)
	return it
}

func callOutput(callID, output string) responses.ResponseInputItemUnionParam {
	it := responses.ResponseInputItemParamOfFunctionCallOutput(output)
	it.OfFunctionCallOutput.CallID = openai.String(callID)
	return it
}

// A stateless (store: false) reasoning conversation as a gateway replays
// it: encrypted reasoning, a function call, its output, more reasoning and
// the answer.
func responsesConversation() responses.ResponseInputParam {
	return responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("You are terse.", responses.EasyInputMessageRoleSystem),
		responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser),
		reasoningItem("rs_1", "Need the weather tool."),
		responses.ResponseInputItemParamOfFunctionCall(args, "call_1", "get_weather"),
		callOutput("call_1", `{"temp":18}`),
		reasoningItem("rs_2", "Answer briefly."),
		responses.ResponseInputItemParamOfMessage("18°C.", responses.EasyInputMessageRoleAssistant),
	}
}

func TestResponsesToStore(t *testing.T) {
	got, err := convert.ResponsesToStore(responsesConversation())
	if err != nil {
		t.Fatal(err)
	}
	details := func(id, summary string) string {
		return `[{"id":"` + id + `","summary":[{"text":"` + summary + `","type":"summary_text"}],"encrypted_content":"` + encrypted + `","type":"reasoning"}]`
	}
	want := []store.NewMessage{
		{Role: store.RoleSystem, Content: "You are terse."},
		{Role: store.RoleUser, Content: "Weather in Paris?"},
		{Role: store.RoleAssistant, Reasoning: "Need the weather tool.", ReasoningDetails: details("rs_1", "Need the weather tool."),
			ToolCalls: []store.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: args}}},
		{Role: store.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: `{"temp":18}`},
		{Role: store.RoleAssistant, Content: "18°C.", Reasoning: "Answer briefly.", ReasoningDetails: details("rs_2", "Answer briefly.")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ResponsesToStore (-want +got):\n%s", diff)
	}
}

// Responses items → a real SQLite store → Responses items: what the API
// receives is the same, encrypted reasoning and arguments byte for byte.
func TestResponsesRoundTripThroughStore(t *testing.T) {
	in := responsesConversation()
	msgs, err := convert.ResponsesToStore(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := convert.ResponsesFromStore(throughStore(t, msgs))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, in), wire(t, out)); diff != "" {
		t.Errorf("round trip, as sent (-sent +rebuilt):\n%s", diff)
	}
	if r := out[2].OfReasoning; r == nil || r.EncryptedContent.Value != encrypted || r.ID != "rs_1" {
		t.Errorf("reasoning item after the round trip = %+v, want rs_1 with its encrypted content byte-exact", r)
	}
	if f := out[3].OfFunctionCall; f == nil || f.Arguments != args || f.CallID != "call_1" {
		t.Errorf("function call after the round trip = %+v, want call_1 with arguments %q", f, args)
	}
}

// One turn's items gather in one assistant message in the order the API
// gives them; an item that cannot continue the turn (a message after its
// message, reasoning after either) starts the next.
func TestResponsesToStore_Turns(t *testing.T) {
	in := responses.ResponseInputParam{
		reasoningItem("rs_1", "a"), reasoningItem("rs_2", "b"),
		responses.ResponseInputItemParamOfMessage("Checking.", responses.EasyInputMessageRoleAssistant),
		responses.ResponseInputItemParamOfFunctionCall(`{}`, "call_1", "f"),
		responses.ResponseInputItemParamOfFunctionCall(`{}`, "call_2", "g"),
		responses.ResponseInputItemParamOfMessage("Done.", responses.EasyInputMessageRoleAssistant),
		reasoningItem("rs_3", "c"),
	}
	got, err := convert.ResponsesToStore(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(got[0].ToolCalls) != 2 || got[0].Content != "Checking." || got[0].Reasoning != "a\n\nb" ||
		got[1].Content != "Done." || got[2].Content != "" || got[2].Reasoning != "c" {
		t.Errorf("ResponsesToStore = %+v, want one turn (two reasoning items, text, two calls), the answer, then a turn of reasoning", got)
	}
}

func TestResponsesToStore_Refuses(t *testing.T) {
	noSource := responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
		responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto),
	}, responses.EasyInputMessageRoleUser)
	rawFile := responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
		{OfInputFile: &responses.ResponseInputFileParam{FileData: openai.String("JVBERi0x")}},
	}, responses.EasyInputMessageRoleUser)
	assistantParts := responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
		responses.ResponseInputContentParamOfInputText("hi")}, responses.EasyInputMessageRoleAssistant)
	tests := []struct {
		name    string
		items   responses.ResponseInputParam
		message int
		part    string
	}{
		{"ImageNoSource", responses.ResponseInputParam{noSource}, 0, "content[0] (an image with other than one of a URL and a file id)"},
		{"FileDataNotDataURL", responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("x", responses.EasyInputMessageRoleUser), rawFile}, 1, "data: URL"},
		{"AssistantContentParts", responses.ResponseInputParam{assistantParts}, 0, "assistant message of input parts"},
		{"Developer", responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("x", responses.EasyInputMessageRoleDeveloper)}, 0, "developer"},
		{"HostedTool", responses.ResponseInputParam{responses.ResponseInputItemParamOfItemReference("ref_1")}, 0, "item"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convert.ResponsesToStore(tt.items)
			var u *convert.UnsupportedError
			if !errors.Is(err, store.ErrInvalidInput) || !errors.As(err, &u) {
				t.Fatalf("ResponsesToStore = %+v, %v; want an *UnsupportedError matching ErrInvalidInput", got, err)
			}
			if u.Message != tt.message || !strings.Contains(u.Part, tt.part) {
				t.Errorf("refused item %d, part %q; want item %d, a part naming %q", u.Message, u.Part, tt.message, tt.part)
			}
		})
	}
}

// Reasoning another provider produced (Anthropic thinking) cannot be sent
// to OpenAI and is left out; the message itself is kept.
func TestResponsesFromStore_ForeignReasoning(t *testing.T) {
	out, err := convert.ResponsesFromStore([]store.Message{{Role: store.RoleAssistant, Content: "hi",
		ReasoningDetails: `[{"type":"thinking","thinking":"t","signature":"sig"}]`}})
	if err != nil {
		t.Fatal(err)
	}
	want := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("hi", responses.EasyInputMessageRoleAssistant)}
	if diff := cmp.Diff(wire(t, want), wire(t, out)); diff != "" {
		t.Errorf("ResponsesFromStore (-want +got):\n%s", diff)
	}
}
