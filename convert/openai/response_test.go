package openai_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3/responses"
	convert "github.com/sessiondb/sessiondb/convert/openai"
	"github.com/sessiondb/sessiondb/store"
)

// apiResponse is a Responses API response as client.Responses.New returns
// it (decoded by the SDK from the API's JSON), around output items.
func apiResponse(t *testing.T, output string) *responses.Response {
	t.Helper()
	var r responses.Response
	if err := json.Unmarshal([]byte(`{"id":"resp_68af","object":"response","created_at":1764590000,"status":"completed",
		"model":"gpt-5-2025-08-07","incomplete_details":null,"error":null,"parallel_tool_calls":true,"store":false,
		"usage":{"input_tokens":40,"output_tokens":90,"total_tokens":130},"output":`+output+`}`), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// A reasoning model's response — encrypted reasoning, a message and a
// function call, each with its id — is one assistant message with the
// response's model, and goes back as the items the next request sends:
// the same ids, reasoning byte for byte.
func TestResponseToStore(t *testing.T) {
	r := apiResponse(t, `[
		{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Need the weather tool."}],"encrypted_content":"`+encrypted+`"},
		{"id":"msg_1","type":"message","status":"completed","role":"assistant",
			"content":[{"type":"output_text","text":"Checking.","annotations":[],"logprobs":[]}]},
		{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"get_weather","arguments":"{\"city\": \"Paris\",  \"units\":\"metric\"}"}]`)
	got, err := convert.ResponseToStore(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.NewMessage{{Role: store.RoleAssistant, Model: "gpt-5-2025-08-07", FinishReason: "completed",
		Reasoning: "Need the weather tool.",
		ReasoningDetails: `[{"id":"rs_1","summary":[{"text":"Need the weather tool.","type":"summary_text"}],"encrypted_content":"` +
			encrypted + `","type":"reasoning"}]`,
		Parts:     []store.Part{{Type: store.PartText, Text: "Checking.", ItemID: "msg_1"}},
		ToolCalls: []store.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: args, ItemID: "fc_1"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ResponseToStore (-want +got):\n%s", diff)
	}
	next := responses.ResponseInputParam{reasoningItem("rs_1", "Need the weather tool."), outputMessage("msg_1", "Checking."),
		itemCall("fc_1", "call_1", "get_weather", args)}
	for name, stored := range map[string][]store.Message{"in memory": asReturned(got), "through a store": throughStore(t, got)} {
		out, err := convert.ResponsesFromStore(stored)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wire(t, next), wire(t, out)); diff != "" {
			t.Errorf("%s: next request's items (-want +got):\n%s", name, diff)
		}
	}
}

// An incomplete response keeps why it stopped; reasoning items after a
// call start the next message, with the same model.
func TestResponseToStore_Stops(t *testing.T) {
	r := apiResponse(t, `[
		{"id":"rs_1","type":"reasoning","summary":[]},
		{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"f","arguments":"{}"},
		{"id":"rs_2","type":"reasoning","summary":[]}]`)
	r.Status, r.IncompleteDetails.Reason = responses.ResponseStatusIncomplete, "max_output_tokens"
	got, err := convert.ResponseToStore(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Model != "gpt-5-2025-08-07" || got[1].Model != "gpt-5-2025-08-07" ||
		got[0].FinishReason != "" || got[1].FinishReason != "max_output_tokens" || got[1].ReasoningDetails != `[{"id":"rs_2","summary":[],"type":"reasoning"}]` {
		t.Errorf("ResponseToStore = %+v, want two messages of the model, the last stopped by max_output_tokens", got)
	}
}

// A codex model's turn keeps each message's phase; a response cut off by
// max_output_tokens keeps its incomplete message; annotations stay with
// their text. Each goes back as the API returned it.
func TestResponseToStore_KeepsPhaseStatusAnnotations(t *testing.T) {
	r := apiResponse(t, `[
		{"id":"msg_1","type":"message","status":"completed","role":"assistant","phase":"commentary",
			"content":[{"type":"output_text","text":"Reading the docs.","annotations":[],"logprobs":[]}]},
		{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"fetch","arguments":"{}"},
		{"id":"msg_2","type":"message","status":"incomplete","role":"assistant","phase":"final_answer",
			"content":[{"type":"output_text","text":"Per the notes, upgr","logprobs":[],
				"annotations":[{"type":"url_citation","start_index":4,"end_index":9,"title":"Notes","url":"https://go.dev/doc/go1.26"}]}]}]`)
	r.Model = "gpt-5.3-codex"
	r.Status, r.IncompleteDetails.Reason = responses.ResponseStatusIncomplete, "max_output_tokens"
	got, err := convert.ResponseToStore(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.NewMessage{
		{Role: store.RoleAssistant, Model: "gpt-5.3-codex",
			Parts:     []store.Part{{Type: store.PartText, Text: "Reading the docs.", ItemID: "msg_1", Attributes: `{"phase":"commentary"}`}},
			ToolCalls: []store.ToolCall{{ID: "call_1", Name: "fetch", Arguments: "{}", ItemID: "fc_1"}}},
		{Role: store.RoleAssistant, Model: "gpt-5.3-codex", FinishReason: "max_output_tokens",
			Parts: []store.Part{{Type: store.PartText, Text: "Per the notes, upgr", ItemID: "msg_2", Attributes: `{"phase":"final_answer","status":"incomplete",` +
				`"annotations":[{"end_index":9,"start_index":4,"title":"Notes","url":"https://go.dev/doc/go1.26","type":"url_citation"}]}`}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ResponseToStore (-want +got):\n%s", diff)
	}
	cited := withPhase(outputMessage("msg_2", "Per the notes, upgr"), responses.ResponseOutputMessagePhaseFinalAnswer, responses.ResponseOutputMessageStatusIncomplete)
	cited.OfOutputMessage.Content[0].OfOutputText.Annotations = []responses.ResponseOutputTextAnnotationUnionParam{{OfURLCitation: &responses.ResponseOutputTextAnnotationURLCitationParam{
		StartIndex: 4, EndIndex: 9, Title: "Notes", URL: "https://go.dev/doc/go1.26"}}}
	next := responses.ResponseInputParam{
		withPhase(outputMessage("msg_1", "Reading the docs."), responses.ResponseOutputMessagePhaseCommentary, responses.ResponseOutputMessageStatusCompleted),
		itemCall("fc_1", "call_1", "fetch", "{}"), cited}
	for name, stored := range map[string][]store.Message{"in memory": asReturned(got), "through a store": throughStore(t, got)} {
		out, err := convert.ResponsesFromStore(stored)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wire(t, next), wire(t, out)); diff != "" {
			t.Errorf("%s: next request's items (-want +got):\n%s", name, diff)
		}
	}
}

// What the store does not model is refused, naming the output item.
func TestResponseToStore_Refuses(t *testing.T) {
	tests := []struct{ name, output, part string }{
		{"WebSearch", `[{"id":"rs_1","type":"reasoning","summary":[]},
			{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"x"}}]`, "web_search_call"},
		{"Refusal", `[{"id":"msg_1","type":"message","status":"completed","role":"assistant",
			"content":[{"type":"refusal","refusal":"I can't help with that."}]}]`, "refusal"},
		{"CallIncomplete", `[{"id":"fc_1","type":"function_call","status":"incomplete","call_id":"call_1","name":"f","arguments":"{\"a\":"}]`, "status"},
		{"CalledByProgram", `[{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"f","arguments":"{}",
			"caller":{"type":"program","caller_id":"prog_1"}}]`, "caller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := apiResponse(t, tt.output)
			got, err := convert.ResponseToStore(r)
			var u *convert.UnsupportedError
			if !errors.Is(err, store.ErrInvalidInput) || !errors.As(err, &u) || !strings.Contains(u.Part, tt.part) {
				t.Fatalf("ResponseToStore = %+v, %v; want an *UnsupportedError naming %q", got, err, tt.part)
			}
			if want := len(r.Output) - 1; u.Message != want {
				t.Errorf("refused output item %d, want %d", u.Message, want)
			}
		})
	}
}
