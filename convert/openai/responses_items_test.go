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

// withPhase is an output message of a phase and a status, as gpt-5.3-codex
// and later return them (and want them back).
func withPhase(it responses.ResponseInputItemUnionParam, phase responses.ResponseOutputMessagePhase,
	status responses.ResponseOutputMessageStatus) responses.ResponseInputItemUnionParam {
	it.OfOutputMessage.Phase, it.OfOutputMessage.Status = phase, status
	return it
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
		// A codex model's commentary before a call, and its final answer
		// cut off by max_output_tokens: phase and status are kept on the
		// text parts, as the item id is.
		{"PhaseAndStatus", responses.ResponseInputParam{
			reasoningItem("rs_1", "Look first."),
			withPhase(outputMessage("msg_1", "Looking at the tests."), responses.ResponseOutputMessagePhaseCommentary, responses.ResponseOutputMessageStatusCompleted),
			itemCall("fc_1", "call_1", "shell", `{"cmd":"go test"}`),
			callOutput("call_1", "ok"),
			withPhase(outputMessage("msg_2", "All green", ", and the"), responses.ResponseOutputMessagePhaseFinalAnswer, responses.ResponseOutputMessageStatusIncomplete),
		}, []store.NewMessage{
			{Role: store.RoleAssistant, Reasoning: "Look first.", ReasoningDetails: details("rs_1", "Look first."),
				Parts:     []store.Part{{Type: store.PartText, Text: "Looking at the tests.", ItemID: "msg_1", Attributes: `{"phase":"commentary"}`}},
				ToolCalls: []store.ToolCall{{ID: "call_1", Name: "shell", Arguments: `{"cmd":"go test"}`, ItemID: "fc_1"}}},
			{Role: store.RoleTool, ToolCallID: "call_1", ToolName: "shell", Content: "ok"},
			{Role: store.RoleAssistant, Parts: []store.Part{
				{Type: store.PartText, Text: "All green", ItemID: "msg_2", Attributes: `{"phase":"final_answer","status":"incomplete"}`},
				{Type: store.PartText, Text: ", and the", ItemID: "msg_2", Attributes: `{"phase":"final_answer","status":"incomplete"}`}}},
		}},
		// An assistant easy input message (no id) keeps its phase in a
		// text part: Content has no room for it.
		{"EasyMessagePhase", responses.ResponseInputParam{
			reasoningItem("rs_1", "Say so."),
			phased(responses.ResponseInputItemParamOfMessage("Done.", responses.EasyInputMessageRoleAssistant), responses.EasyInputMessagePhaseFinalAnswer),
		}, []store.NewMessage{
			{Role: store.RoleAssistant, Reasoning: "Say so.", ReasoningDetails: details("rs_1", "Say so."),
				Parts: []store.Part{{Type: store.PartText, Text: "Done.", Attributes: `{"phase":"final_answer"}`}}},
		}},
		// Annotations and logprobs stay with the text they belong to.
		{"AnnotationsAndLogprobs", responses.ResponseInputParam{annotated()}, []store.NewMessage{
			{Role: store.RoleAssistant, Parts: []store.Part{
				{Type: store.PartText, Text: "Go 1.26 is out.", ItemID: "msg_1", Attributes: `{"annotations":[` +
					`{"end_index":14,"start_index":0,"title":"Go 1.26 Release Notes","url":"https://go.dev/doc/go1.26","type":"url_citation"},` +
					`{"file_id":"file-9","filename":"notes.md","index":3,"type":"file_citation"}]}`},
				{Type: store.PartText, Text: " Upgrade.", ItemID: "msg_1", Attributes: `{"logprobs":[{"token":" Upgrade","bytes":[32,85],"logprob":-0.25,"top_logprobs":[]}]}`}}},
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

// phased is an easy input message of a phase.
func phased(it responses.ResponseInputItemUnionParam, phase responses.EasyInputMessagePhase) responses.ResponseInputItemUnionParam {
	it.OfMessage.Phase = phase
	return it
}

// annotated is an output message whose first text cites a page and a file
// and whose second has its logprobs.
func annotated() responses.ResponseInputItemUnionParam {
	it := outputMessage("msg_1", "Go 1.26 is out.", " Upgrade.")
	it.OfOutputMessage.Content[0].OfOutputText.Annotations = []responses.ResponseOutputTextAnnotationUnionParam{
		{OfURLCitation: &responses.ResponseOutputTextAnnotationURLCitationParam{EndIndex: 14, Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26"}},
		{OfFileCitation: &responses.ResponseOutputTextAnnotationFileCitationParam{FileID: "file-9", Filename: "notes.md", Index: 3}}}
	it.OfOutputMessage.Content[1].OfOutputText.Logprobs = []responses.ResponseOutputTextLogprobParam{
		{Token: " Upgrade", Bytes: []int64{32, 85}, Logprob: -0.25, TopLogprobs: []responses.ResponseOutputTextLogprobTopLogprobParam{}}}
	return it
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

// An output message, message or function call holding what the store has
// no field for is refused, naming it: a user message's phase (not an
// assistant's), a function call's status or namespace (a tool call has no
// attributes).
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
		{"MessageNoID", msg(func(m *responses.ResponseOutputMessageParam) { m.ID = "" }), "no id"},
		{"MessageNoContent", msg(func(m *responses.ResponseOutputMessageParam) { m.Content = nil }), "no content"},
		{"Refusal", msg(func(m *responses.ResponseOutputMessageParam) {
			m.Content = append(m.Content, responses.ResponseOutputMessageContentUnionParam{OfRefusal: &responses.ResponseOutputRefusalParam{Refusal: "No."}})
		}), "content[1] (a refusal"},
		{"UserMessagePhase", phased(responses.ResponseInputItemParamOfMessage("Hi.", responses.EasyInputMessageRoleUser),
			responses.EasyInputMessagePhaseCommentary), "phase"},
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

// Attributes OpenAI has no field for are left out: another provider's (an
// Anthropic cache_control), and all of them for chat completions, which
// take no phase. Attributes an easy input message cannot carry (a status
// without an item id) or of the wrong type are an error, not a drop.
func TestResponsesFromStore_PartAttributes(t *testing.T) {
	cached := store.Message{ID: 1, Role: store.RoleAssistant, Content: "Hi.",
		Parts: []store.Part{{Type: store.PartText, Text: "Hi.", Attributes: `{"cache_control":{"type":"ephemeral"}}`}}}
	out, err := convert.ResponsesFromStore([]store.Message{cached})
	if err != nil {
		t.Fatal(err)
	}
	want := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Hi.", responses.EasyInputMessageRoleAssistant)}
	if diff := cmp.Diff(wire(t, want), wire(t, out)); diff != "" {
		t.Errorf("another provider's attributes (-want +got):\n%s", diff)
	}

	phased := store.Message{ID: 2, Role: store.RoleAssistant, Content: "Done.",
		Parts: []store.Part{{Type: store.PartText, Text: "Done.", ItemID: "msg_1", Attributes: `{"phase":"final_answer"}`}}}
	chat, err := convert.ChatFromStore([]store.Message{phased})
	if err != nil {
		t.Fatal(err)
	}
	wantChat := []openai.ChatCompletionMessageParamUnion{{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
		Content: openai.ChatCompletionAssistantMessageParamContentUnion{OfArrayOfContentParts: []openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{
			{OfText: &openai.ChatCompletionContentPartTextParam{Text: "Done."}}}}}}}
	if diff := cmp.Diff(wire(t, wantChat), wire(t, chat)); diff != "" {
		t.Errorf("chat completions (-want +got):\n%s", diff)
	}

	for name, attrs := range map[string]string{"StatusWithoutItemID": `{"status":"incomplete"}`, "PhaseNotAString": `{"phase":1}`} {
		t.Run(name, func(t *testing.T) {
			m := store.Message{ID: 3, Role: store.RoleAssistant, Parts: []store.Part{{Type: store.PartText, Text: "x", Attributes: attrs}}}
			if out, err := convert.ResponsesFromStore([]store.Message{m}); !errors.Is(err, store.ErrInvalidInput) {
				t.Errorf("ResponsesFromStore = %+v, %v; want ErrInvalidInput", out, err)
			}
		})
	}
}
