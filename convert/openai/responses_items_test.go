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

// outputMessage is an assistant message as the API returned it, sent back
// as an output message item: its msg_ id, status completed, each text
// with the annotations list the API wants.
func outputMessage(id string, texts ...string) responses.ResponseInputItemUnionParam {
	m := &responses.ResponseOutputMessageParam{ID: id, Status: responses.ResponseOutputMessageStatusCompleted}
	for _, t := range texts {
		m.Content = append(m.Content, responses.ResponseOutputMessageContentUnionParam{OfOutputText: &responses.ResponseOutputTextParam{
			Text: t, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}})
	}
	return responses.ResponseInputItemUnionParam{OfOutputMessage: m}
}

// itemCall is a function call with its own fc_ item id besides its
// call id.
func itemCall(itemID, callID, name, arguments string) responses.ResponseInputItemUnionParam {
	it := responses.ResponseInputItemParamOfFunctionCall(arguments, callID, name)
	it.OfFunctionCall.ID = openai.String(itemID)
	return it
}

// itemsCases are Responses inputs a reasoning model is replayed with —
// every output item with its id, as the API pairs reasoning with the
// items after it — each with the messages ResponsesToStore gives.
func itemsCases() []struct {
	name string
	in   responses.ResponseInputParam
	want []store.NewMessage
} {
	details := func(id, summary string) string {
		return `[{"id":"` + id + `","summary":[{"text":"` + summary + `","type":"summary_text"}],"encrypted_content":"` + encrypted + `","type":"reasoning"}]`
	}
	return []struct {
		name string
		in   responses.ResponseInputParam
		want []store.NewMessage
	}{
		{"ReasoningModelTurns", responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser),
			reasoningItem("rs_1", "Need the weather tool."),
			outputMessage("msg_1", "Checking."),
			itemCall("fc_1", "call_1", "get_weather", args),
			callOutput("call_1", `{"temp":18}`),
			reasoningItem("rs_2", "Answer briefly."),
			outputMessage("msg_2", "18°C", " and dry."),
		}, []store.NewMessage{
			{Role: store.RoleUser, Content: "Weather in Paris?"},
			{Role: store.RoleAssistant, Reasoning: "Need the weather tool.", ReasoningDetails: details("rs_1", "Need the weather tool."),
				Parts:     []store.Part{{Type: store.PartText, Text: "Checking.", ItemID: "msg_1"}},
				ToolCalls: []store.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: args, ItemID: "fc_1"}}},
			{Role: store.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: `{"temp":18}`},
			{Role: store.RoleAssistant, Reasoning: "Answer briefly.", ReasoningDetails: details("rs_2", "Answer briefly."),
				Parts: []store.Part{{Type: store.PartText, Text: "18°C", ItemID: "msg_2"}, {Type: store.PartText, Text: " and dry.", ItemID: "msg_2"}}},
		}},
		{"CallsWithItemIDs", responses.ResponseInputParam{
			reasoningItem("rs_1", "Two lookups."),
			itemCall("fc_1", "call_1", "f", `{}`),
			itemCall("fc_2", "call_2", "g", `{"x":1}`),
		}, []store.NewMessage{
			{Role: store.RoleAssistant, Reasoning: "Two lookups.", ReasoningDetails: details("rs_1", "Two lookups."),
				ToolCalls: []store.ToolCall{{ID: "call_1", Name: "f", Arguments: `{}`, ItemID: "fc_1"}, {ID: "call_2", Name: "g", Arguments: `{"x":1}`, ItemID: "fc_2"}}},
		}},
		// Items out of the order one message holds (reasoning after a
		// call, a message after a message) start the next message, so
		// the order is kept.
		{"InterleavedItems", responses.ResponseInputParam{
			reasoningItem("rs_1", "a"),
			itemCall("fc_1", "call_1", "f", `{}`),
			reasoningItem("rs_2", "b"),
			itemCall("fc_2", "call_2", "g", `{}`),
			outputMessage("msg_1", "One."),
			outputMessage("msg_2", "Two."),
		}, []store.NewMessage{
			{Role: store.RoleAssistant, Reasoning: "a", ReasoningDetails: details("rs_1", "a"),
				ToolCalls: []store.ToolCall{{ID: "call_1", Name: "f", Arguments: `{}`, ItemID: "fc_1"}}},
			{Role: store.RoleAssistant, Reasoning: "b", ReasoningDetails: details("rs_2", "b"),
				ToolCalls: []store.ToolCall{{ID: "call_2", Name: "g", Arguments: `{}`, ItemID: "fc_2"}}},
			{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartText, Text: "One.", ItemID: "msg_1"}}},
			{Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartText, Text: "Two.", ItemID: "msg_2"}}},
		}},
	}
}

// Every case converts to the messages named and back — as the store
// returns them — to the same items on the wire, ids and all.
func TestResponsesItemIDs(t *testing.T) {
	for _, tt := range itemsCases() {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convert.ResponsesToStore(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ResponsesToStore (-want +got):\n%s", diff)
			}
			out, err := convert.ResponsesFromStore(asReturned(got))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wire(t, tt.in), wire(t, out)); diff != "" {
				t.Errorf("round trip, as sent (-sent +rebuilt):\n%s", diff)
			}
		})
	}
}

// The same cases through a real SQLite store: the item ids are kept on
// the parts and tool calls the file holds.
func TestResponsesItemIDsThroughStore(t *testing.T) {
	for _, tt := range itemsCases() {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := convert.ResponsesToStore(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			out, err := convert.ResponsesFromStore(throughStore(t, msgs))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wire(t, tt.in), wire(t, out)); diff != "" {
				t.Errorf("round trip, as sent (-sent +rebuilt):\n%s", diff)
			}
		})
	}
}

// An output message or function call holding what the store has no field
// for is refused, naming it.
func TestResponsesToStore_RefusesItemFields(t *testing.T) {
	with := func(it responses.ResponseInputItemUnionParam, edit func(responses.ResponseInputItemUnionParam)) responses.ResponseInputItemUnionParam {
		edit(it)
		return it
	}
	msg := func(edit func(*responses.ResponseOutputMessageParam)) responses.ResponseInputItemUnionParam {
		return with(outputMessage("msg_1", "Hi."), func(it responses.ResponseInputItemUnionParam) { edit(it.OfOutputMessage) })
	}
	call := func(edit func(*responses.ResponseFunctionToolCallParam)) responses.ResponseInputItemUnionParam {
		return with(itemCall("fc_1", "call_1", "f", `{}`), func(it responses.ResponseInputItemUnionParam) { edit(it.OfFunctionCall) })
	}
	outputID := callOutput("call_1", "ok")
	outputID.OfFunctionCallOutput.ID = openai.String("fco_1")
	tests := []struct {
		name string
		item responses.ResponseInputItemUnionParam
		part string
	}{
		{"MessageIncomplete", msg(func(m *responses.ResponseOutputMessageParam) {
			m.Status = responses.ResponseOutputMessageStatusIncomplete
		}), "status"},
		{"MessagePhase", msg(func(m *responses.ResponseOutputMessageParam) {
			m.Phase = responses.ResponseOutputMessagePhaseCommentary
		}), "phase"},
		{"MessageNoID", msg(func(m *responses.ResponseOutputMessageParam) { m.ID = "" }), "no id"},
		{"MessageNoContent", msg(func(m *responses.ResponseOutputMessageParam) { m.Content = nil }), "no content"},
		{"Refusal", msg(func(m *responses.ResponseOutputMessageParam) {
			m.Content = append(m.Content, responses.ResponseOutputMessageContentUnionParam{OfRefusal: &responses.ResponseOutputRefusalParam{Refusal: "No."}})
		}), "content[1] (a refusal"},
		{"Annotations", msg(func(m *responses.ResponseOutputMessageParam) {
			m.Content[0].OfOutputText.Annotations = []responses.ResponseOutputTextAnnotationUnionParam{
				{OfURLCitation: &responses.ResponseOutputTextAnnotationURLCitationParam{EndIndex: 3, Title: "Example", URL: "https://example.com"}}}
		}), "content[0].annotations"},
		{"Logprobs", msg(func(m *responses.ResponseOutputMessageParam) {
			m.Content[0].OfOutputText.Logprobs = []responses.ResponseOutputTextLogprobParam{{Token: "Hi", Logprob: -0.1}}
		}), "content[0].logprobs"},
		{"CallStatus", call(func(f *responses.ResponseFunctionToolCallParam) {
			f.Status = responses.ResponseFunctionToolCallStatusCompleted
		}), "status"},
		{"CallNamespace", call(func(f *responses.ResponseFunctionToolCallParam) { f.Namespace = openai.String("tools") }), "namespace"},
		{"CallOutputID", outputID, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convert.ResponsesToStore(responses.ResponseInputParam{tt.item})
			var u *convert.UnsupportedError
			if !errors.Is(err, store.ErrInvalidInput) || !errors.As(err, &u) {
				t.Fatalf("ResponsesToStore = %+v, %v; want an *UnsupportedError matching ErrInvalidInput", got, err)
			}
			if u.Message != 0 || !strings.Contains(u.Part, tt.part) {
				t.Errorf("refused item %d, part %q; want item 0, a part naming %q", u.Message, u.Part, tt.part)
			}
		})
	}
}

// Parts another provider wrote come back as the items the API takes: an
// Anthropic thinking part is left out (OpenAI cannot take it), an OpenAI
// reasoning item in a reasoning part is sent with the turn's reasoning.
func TestResponsesFromStore_ReasoningParts(t *testing.T) {
	in := []store.Message{{Role: store.RoleAssistant, Parts: []store.Part{
		{Type: store.PartReasoning, Text: "t", Data: `{"type":"thinking","thinking":"t","signature":"sig"}`},
		{Type: store.PartToolUse, ToolCallID: "toolu_1", Name: "f", Input: `{}`},
		{Type: store.PartReasoning, Data: `{"id":"rs_1","summary":[],"type":"reasoning"}`, ItemID: "rs_1"},
		{Type: store.PartText, Text: "Done."}}}}
	want := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfReasoning("rs_1", []responses.ResponseReasoningItemSummaryParam{}),
		responses.ResponseInputItemParamOfMessage("Done.", responses.EasyInputMessageRoleAssistant),
		responses.ResponseInputItemParamOfFunctionCall(`{}`, "toolu_1", "f"),
	}
	out, err := convert.ResponsesFromStore(asReturned([]store.NewMessage{{Role: in[0].Role, Parts: in[0].Parts}}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, want), wire(t, out)); diff != "" {
		t.Errorf("ResponsesFromStore (-want +got):\n%s", diff)
	}
	chat, err := convert.ChatFromStore(in)
	if err != nil {
		t.Fatalf("ChatFromStore(reasoning parts) = %v, want them left out", err)
	}
	if a := chat[0].OfAssistant; a == nil || len(a.ToolCalls) != 1 || len(a.Content.OfArrayOfContentParts) != 1 {
		t.Errorf("ChatFromStore = %+v, want the text and the call, the reasoning left out", chat)
	}
}

// An output text built without its annotations list means the same as
// one with an empty list (which the API wants, and the store rebuilds):
// it is kept, and sent back with the list.
func TestResponsesToStore_OutputTextWithoutAnnotations(t *testing.T) {
	it := outputMessage("msg_1", "Hi.")
	it.OfOutputMessage.Content[0].OfOutputText.Annotations = nil
	got, err := convert.ResponsesToStore(responses.ResponseInputParam{it})
	if err != nil {
		t.Fatal(err)
	}
	out, err := convert.ResponsesFromStore(throughStore(t, got))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, responses.ResponseInputParam{outputMessage("msg_1", "Hi.")}), wire(t, out)); diff != "" {
		t.Errorf("sent back (-want +got):\n%s", diff)
	}
}
