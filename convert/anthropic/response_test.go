package anthropic_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	convert "github.com/sessiondb/sessiondb/convert/anthropic"
	"github.com/sessiondb/sessiondb/store"
)

func response(t *testing.T, content string) *anthropic.Message {
	t.Helper()
	var msg anthropic.Message
	if err := json.Unmarshal([]byte(`{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant",
		"model":"claude-sonnet-4-5-20250929","stop_reason":"tool_use","stop_sequence":null,
		"usage":{"input_tokens":12,"output_tokens":40},"content":`+content+`}`), &msg); err != nil {
		t.Fatal(err)
	}
	return &msg
}

// A response is kept with its model and stop reason; its signed thinking,
// text and tool call's input (as the API wrote it) byte-exact.
func TestMessageToStore(t *testing.T) {
	got, err := convert.MessageToStore(response(t, `[
		{"type":"thinking","thinking":"Need the clock.","signature":"`+signature+`"},
		{"type":"text","text":"Checking.","citations":null},
		{"type":"tool_use","id":"toolu_01","name":"clock","input":{"tz": "Asia/Tokyo"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := store.NewMessage{Role: store.RoleAssistant, Content: "Checking.", Model: "claude-sonnet-4-5-20250929", FinishReason: "tool_use",
		Reasoning: "Need the clock.", ReasoningDetails: `[{"signature":"` + signature + `","thinking":"Need the clock.","type":"thinking"}]`,
		ToolCalls: []store.ToolCall{{ID: "toolu_01", Name: "clock", Arguments: `{"tz": "Asia/Tokyo"}`}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MessageToStore (-want +got):\n%s", diff)
	}
}

// A response with interleaved thinking (a thinking block between tool
// calls) keeps every block in order as parts, each thinking block's
// signature byte-exact, and gives the same content back.
func TestMessageToStore_InterleavedThinking(t *testing.T) {
	got, err := convert.MessageToStore(response(t, `[
		{"type":"thinking","thinking":"Need the clock.","signature":"`+signature+`"},
		{"type":"tool_use","id":"toolu_01","name":"clock","input":{"tz": "Asia/Tokyo"}},
		{"type":"thinking","thinking":"And the weather.","signature":"`+signature2+`"},
		{"type":"tool_use","id":"toolu_02","name":"weather","input":{"city":"Tokyo"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := store.NewMessage{Role: store.RoleAssistant, Model: "claude-sonnet-4-5-20250929", FinishReason: "tool_use",
		Reasoning: "Need the clock.\n\nAnd the weather.", Parts: []store.Part{
			{Type: store.PartReasoning, Text: "Need the clock.", Data: `{"signature":"` + signature + `","thinking":"Need the clock.","type":"thinking"}`},
			{Type: store.PartToolUse, ToolCallID: "toolu_01", Name: "clock", Input: `{"tz": "Asia/Tokyo"}`},
			{Type: store.PartReasoning, Text: "And the weather.", Data: `{"signature":"` + signature2 + `","thinking":"And the weather.","type":"thinking"}`},
			{Type: store.PartToolUse, ToolCallID: "toolu_02", Name: "weather", Input: `{"city":"Tokyo"}`}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MessageToStore (-want +got):\n%s", diff)
	}
	out, err := convert.FromStore(throughStore(t, []store.NewMessage{got}))
	if err != nil {
		t.Fatal(err)
	}
	wantBack := []anthropic.MessageParam{anthropic.NewAssistantMessage(
		anthropic.NewThinkingBlock(signature, "Need the clock."),
		anthropic.NewToolUseBlock("toolu_01", json.RawMessage(`{"tz": "Asia/Tokyo"}`), "clock"),
		anthropic.NewThinkingBlock(signature2, "And the weather."),
		anthropic.NewToolUseBlock("toolu_02", json.RawMessage(`{"city":"Tokyo"}`), "weather"))}
	if diff := cmp.Diff(wire(t, wantBack), wire(t, out)); diff != "" {
		t.Errorf("back from the store (-want +got):\n%s", diff)
	}
}

// A response's citations are kept with the text they belong to and sent
// back with it.
func TestMessageToStore_Citations(t *testing.T) {
	got, err := convert.MessageToStore(response(t, `[{"type":"text","text":"Grass is green.","citations":[{"type":"char_location",
		"cited_text":"Grass is green.","document_index":0,"document_title":"notes","start_char_index":0,"end_char_index":15}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := store.NewMessage{Role: store.RoleAssistant, Model: "claude-sonnet-4-5-20250929", FinishReason: "tool_use",
		Parts: []store.Part{{Type: store.PartText, Text: "Grass is green.", Attributes: `{"citations":[{"document_title":"notes",` +
			`"cited_text":"Grass is green.","document_index":0,"end_char_index":15,"start_char_index":0,"type":"char_location"}]}`}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MessageToStore (-want +got):\n%s", diff)
	}
	out, err := convert.FromStore(throughStore(t, []store.NewMessage{got}))
	if err != nil {
		t.Fatal(err)
	}
	text := anthropic.TextBlockParam{Text: "Grass is green.", Citations: []anthropic.TextCitationParamUnion{grassCitation}}
	if diff := cmp.Diff(wire(t, []anthropic.MessageParam{anthropic.NewAssistantMessage(anthropic.ContentBlockParamUnion{OfText: &text})}), wire(t, out)); diff != "" {
		t.Errorf("back from the store (-want +got):\n%s", diff)
	}
}

func TestMessageToStore_Refuses(t *testing.T) {
	tests := []struct{ name, content, part string }{
		{"ServerToolUse", `[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}}]`, "server_tool_use"},
		{"CalledByCode", `[{"type":"tool_use","id":"toolu_1","name":"f","input":{},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_2"}}]`, "caller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convert.MessageToStore(response(t, tt.content))
			var u *convert.UnsupportedError
			if !errors.Is(err, store.ErrInvalidInput) || !errors.As(err, &u) || !strings.Contains(u.Part, tt.part) {
				t.Errorf("MessageToStore = %+v, %v; want an *UnsupportedError naming %q", got, err, tt.part)
			}
		})
	}
}
