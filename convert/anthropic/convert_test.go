package anthropic_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	convert "github.com/sessiondb/sessiondb/convert/anthropic"
	"github.com/sessiondb/sessiondb/store"
)

// allFields compares SDK params field by field, their unexported
// bookkeeping included (zero in values built by constructors).
var allFields = cmp.Exporter(func(reflect.Type) bool { return true })

const (
	signature = "EqQBCkYIBxgCKkB+9c3Xr1/ZPp8+Lqs0e7yM1uQ2vYk3HfR6n0bLwT8sZ1x4Rk7uGmD1yF0=="
	redacted  = "EmwKAhgBEgy3va3pzix/LafPsn4aDNm0a2bT8rBq+4m5IjB9d1fYt0pYzJ9vXgQ=="
	// signature2 signs a second thinking block of the same turn.
	signature2 = "EpYBCkYIBxgCKkDq2y0XbNzZ8m2k3Rfa7XnQp1vQk8wS+e4r0cYz5TgLmB9pHh3jU6sV1oA=="
)

// conversation is a real tool-using, thinking Anthropic conversation: a
// system prompt, a question, signed and redacted thinking, two tool calls
// (one input with spacing that must survive), their results and the
// next question in one user message, and the answer.
func conversation() []anthropic.MessageParam {
	return []anthropic.MessageParam{
		{OfSystem: &anthropic.SystemMessageParam{Content: []anthropic.TextBlockParam{{Text: "You are terse."}}}},
		anthropic.NewUserMessage(anthropic.NewTextBlock("What is in /tmp and how big is it?")),
		anthropic.NewAssistantMessage(
			anthropic.NewThinkingBlock(signature, "I should list it, then measure."),
			anthropic.NewRedactedThinkingBlock(redacted),
			anthropic.NewTextBlock("Let me look."),
			anthropic.NewToolUseBlock("toolu_01A", json.RawMessage(`{"cmd": "ls -la /tmp",  "timeout":30}`), "shell"),
			anthropic.NewToolUseBlock("toolu_01B", json.RawMessage(`{"path":"/tmp"}`), "du"),
		),
		anthropic.NewUserMessage(
			anthropic.NewToolResultBlock("toolu_01A", "a.txt\nb.txt", false),
			anthropic.ContentBlockParamUnion{OfToolResult: &anthropic.ToolResultBlockParam{ToolUseID: "toolu_01B",
				Content: []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: "8.0K\t/tmp"}}}}},
			anthropic.NewTextBlock("And the biggest file?"),
		),
		anthropic.NewAssistantMessage(anthropic.NewTextBlock("b.txt, 4 KiB.")),
	}
}

func TestToStore(t *testing.T) {
	got, err := convert.ToStore(conversation())
	if err != nil {
		t.Fatal(err)
	}
	wantDetails := `[{"signature":"` + signature + `","thinking":"I should list it, then measure.","type":"thinking"},` +
		`{"data":"` + redacted + `","type":"redacted_thinking"}]`
	want := []store.NewMessage{
		{Role: store.RoleSystem, Content: "You are terse."},
		{Role: store.RoleUser, Content: "What is in /tmp and how big is it?"},
		{Role: store.RoleAssistant, Content: "Let me look.", Reasoning: "I should list it, then measure.", ReasoningDetails: wantDetails,
			ToolCalls: []store.ToolCall{{ID: "toolu_01A", Name: "shell", Arguments: `{"cmd": "ls -la /tmp",  "timeout":30}`},
				{ID: "toolu_01B", Name: "du", Arguments: `{"path":"/tmp"}`}}},
		{Role: store.RoleTool, ToolCallID: "toolu_01A", ToolName: "shell", Content: "a.txt\nb.txt"},
		{Role: store.RoleTool, ToolCallID: "toolu_01B", ToolName: "du", Content: "8.0K\t/tmp"},
		{Role: store.RoleUser, Content: "And the biggest file?"},
		{Role: store.RoleAssistant, Content: "b.txt, 4 KiB."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToStore (-want +got):\n%s", diff)
	}
}

// Anthropic → a real SQLite store → Anthropic gives the conversation back:
// roles, text, tool ids, names and inputs byte for byte, and the signed
// and redacted thinking exactly as the API returned it.
func TestRoundTripThroughStore(t *testing.T) {
	in := conversation()
	msgs, err := convert.ToStore(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := convert.FromStore(throughStore(t, msgs))
	if err != nil {
		t.Fatal(err)
	}
	// NewToolResultBlock sets is_error: false, which the store does not
	// keep; the rebuilt block leaves it out, as the API's default.
	in[3].OfUser.Content[0].OfToolResult.IsError = anthropic.ToolResultBlockParam{}.IsError
	if diff := cmp.Diff(in, out, allFields); diff != "" {
		t.Errorf("round trip (-sent +rebuilt):\n%s", diff)
	}
	thinking := out[2].OfAssistant.Content[0].OfThinking
	if thinking == nil || thinking.Signature != signature {
		t.Errorf("thinking block after the round trip = %+v, want the signature byte-exact", thinking)
	}
	if args := out[2].OfAssistant.Content[3].OfToolUse.Input.(json.RawMessage); string(args) != `{"cmd": "ls -la /tmp",  "timeout":30}` {
		t.Errorf("tool input after the round trip = %s, want it byte-exact", args)
	}
}

// A tool input built as a Go value is kept as its JSON encoding.
func TestToStore_ToolInputValue(t *testing.T) {
	got, err := convert.ToStore([]anthropic.MessageParam{anthropic.NewAssistantMessage(
		anthropic.NewToolUseBlock("toolu_1", map[string]any{"query": "weather", "days": 3}, "search"))})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"days":3,"query":"weather"}`; len(got) != 1 || len(got[0].ToolCalls) != 1 || got[0].ToolCalls[0].Arguments != want {
		t.Errorf("ToStore = %+v, want one call with arguments %s", got, want)
	}
}

// What the store does not model is refused, naming the message and the
// part, never dropped: a call of a toolset or made by code execution is
// another kind of call than the store's, and an image's transformations
// are not among the attributes kept.
func TestToStore_Refuses(t *testing.T) {
	toolset := anthropic.NewToolUseBlock("toolu_1", json.RawMessage(`{}`), "f")
	toolset.OfToolUse.ToolsetName = anthropic.String("mcp_github")
	byCode := anthropic.NewToolUseBlock("toolu_1", json.RawMessage(`{}`), "f")
	byCode.OfToolUse.Caller = anthropic.ToolUseBlockParamCallerUnion{OfCodeExecution20250825: &anthropic.ServerToolCallerParam{ToolID: "srvtoolu_1"}}
	shrunk := anthropic.NewImageBlockBase64("image/png", "iVBORw0KGgo=")
	shrunk.OfImage.Transformations.OversizedImage = "error"
	search := anthropic.ToolResultBlockParamContentUnion{OfSearchResult: &anthropic.SearchResultBlockParam{
		Content: []anthropic.TextBlockParam{{Text: "hit"}}, Source: "https://example.com", Title: "Example"}}
	tests := []struct {
		name    string
		msgs    []anthropic.MessageParam
		message int
		part    string
	}{
		{"ToolUseOfToolset", []anthropic.MessageParam{anthropic.NewAssistantMessage(toolset)}, 0, "toolset_name"},
		{"ToolUseByCode", []anthropic.MessageParam{anthropic.NewAssistantMessage(byCode)}, 0, "caller"},
		{"ImageTransformations", []anthropic.MessageParam{anthropic.NewUserMessage(shrunk)}, 0, "transformations"},
		{"DocumentOfContentBlocks", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewDocumentBlock(anthropic.ContentBlockSourceParam{
			Content: anthropic.ContentBlockSourceContentUnionParam{OfString: anthropic.String("x")}}))}, 0, "content blocks"},
		{"SearchResultInToolResult", []anthropic.MessageParam{anthropic.NewUserMessage(toolResult("t", false, search))}, 0, "search_result"},
		{"ServerToolUse", []anthropic.MessageParam{anthropic.NewAssistantMessage(anthropic.ContentBlockParamUnion{
			OfServerToolUse: &anthropic.ServerToolUseBlockParam{ID: "srvtoolu_1", Input: map[string]any{"query": "x"}, Name: "web_search"}})}, 0, "server_tool_use"},
		{"ToolUseFromUser", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewToolUseBlock("t", json.RawMessage(`{}`), "f"))}, 0, "tool_use"},
		{"ThinkingFromUser", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewThinkingBlock("sig", "t"))}, 0, "thinking"},
		{"ToolResultAfterText", []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("x"), anthropic.NewToolResultBlock("t", "r", false))}, 0, "content[1]"},
		{"NoRole", []anthropic.MessageParam{{}}, 0, "no role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convert.ToStore(tt.msgs)
			var u *convert.UnsupportedError
			if !errors.Is(err, store.ErrInvalidInput) || !errors.As(err, &u) {
				t.Fatalf("ToStore = %+v, %v; want an *UnsupportedError matching ErrInvalidInput", got, err)
			}
			if u.Message != tt.message || !strings.Contains(u.Part, tt.part) {
				t.Errorf("refused message %d, part %q; want message %d, a part naming %q", u.Message, u.Part, tt.message, tt.part)
			}
		})
	}
}

// A message the store would refuse is refused by ToStore already, with
// the store's error: an image of no media type.
func TestToStore_InvalidPart(t *testing.T) {
	got, err := convert.ToStore([]anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewImageBlockBase64("", "iVBORw0KGgo="))})
	if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "media type") {
		t.Errorf("ToStore = %+v, %v; want ErrInvalidInput naming the media type", got, err)
	}
}

// Reasoning another provider produced (an OpenAI reasoning item) cannot be
// sent to Anthropic and is left out; the rest of the message is kept.
func TestFromStore_ForeignReasoning(t *testing.T) {
	out, err := convert.FromStore([]store.Message{{Role: store.RoleAssistant, Content: "hi", Reasoning: "thought",
		ReasoningDetails: `[{"type":"reasoning","id":"rs_1","encrypted_content":"gAAAA"}]`}})
	if err != nil {
		t.Fatal(err)
	}
	want := []anthropic.MessageParam{anthropic.NewAssistantMessage(anthropic.NewTextBlock("hi"))}
	if diff := cmp.Diff(want, out, allFields); diff != "" {
		t.Errorf("FromStore (-want +got):\n%s", diff)
	}
	if _, err := convert.FromStore([]store.Message{{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "c", Name: "n", Arguments: "not json"}}}}); !errors.Is(err, store.ErrInvalidInput) {
		t.Errorf("FromStore(arguments that are not JSON) = %v, want ErrInvalidInput", err)
	}
}
