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

func userContent(content ...responses.ResponseInputContentUnionParam) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam(content), responses.EasyInputMessageRoleUser)
}

func inputImage(url, fileID string, detail responses.ResponseInputImageDetail) responses.ResponseInputContentUnionParam {
	img := responses.ResponseInputContentParamOfInputImage(detail)
	if url != "" {
		img.OfInputImage.ImageURL = openai.String(url)
	}
	if fileID != "" {
		img.OfInputImage.FileID = openai.String(fileID)
	}
	return img
}

// responsesPartsCases are Responses items the store keeps as parts, each
// with the messages ResponsesToStore gives.
func responsesPartsCases() []struct {
	name string
	in   responses.ResponseInputParam
	want []store.NewMessage
} {
	screenshot := responses.ResponseInputItemParamOfFunctionCallOutput(responses.ResponseFunctionCallOutputItemListParam{
		responses.ResponseFunctionCallOutputItemParamOfInputText("the screen:"),
		{OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String("data:image/jpeg;base64," + jpegB64), Detail: responses.ResponseInputImageContentDetailLow}},
	})
	screenshot.OfFunctionCallOutput.CallID = openai.String("call_1")
	return []struct {
		name string
		in   responses.ResponseInputParam
		want []store.NewMessage
	}{
		{"ImageURL", responses.ResponseInputParam{userContent(responses.ResponseInputContentParamOfInputText("What is this?"),
			inputImage("https://example.com/cat.png", "", responses.ResponseInputImageDetailHigh))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartText, Text: "What is this?"},
				{Type: store.PartImage, MediaType: "image/*", URL: "https://example.com/cat.png", Detail: "high"}}}}},
		{"ImageBase64", responses.ResponseInputParam{userContent(inputImage("data:image/jpeg;base64,"+jpegB64, "", responses.ResponseInputImageDetailAuto))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/jpeg", URL: "data:image/jpeg;base64," + jpegB64, Detail: "auto"}}}}},
		{"ImageFileID", responses.ResponseInputParam{userContent(inputImage("", "file-abc", responses.ResponseInputImageDetailLow))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartImage, MediaType: "image/*", BlobID: "file-abc", Detail: "low"}}}}},
		{"Files", responses.ResponseInputParam{userContent(
			responses.ResponseInputContentUnionParam{OfInputFile: &responses.ResponseInputFileParam{FileData: openai.String("data:application/pdf;base64," + pdfB64), Filename: openai.String("report.pdf")}},
			responses.ResponseInputContentUnionParam{OfInputFile: &responses.ResponseInputFileParam{FileURL: openai.String("https://example.com/a.pdf")}},
			responses.ResponseInputContentUnionParam{OfInputFile: &responses.ResponseInputFileParam{FileID: openai.String("file-xyz")}})},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{
				{Type: store.PartFile, MediaType: "application/pdf", URL: "data:application/pdf;base64," + pdfB64, Name: "report.pdf"},
				{Type: store.PartFile, MediaType: "application/octet-stream", URL: "https://example.com/a.pdf"},
				{Type: store.PartFile, MediaType: "application/octet-stream", BlobID: "file-xyz"}}}}},
		{"InputMessageItem", responses.ResponseInputParam{responses.ResponseInputItemParamOfInputMessage(responses.ResponseInputMessageContentListParam{
			responses.ResponseInputContentParamOfInputText("typed message item")}, "system")},
			[]store.NewMessage{{Role: store.RoleSystem, Parts: []store.Part{{Type: store.PartText, Text: "typed message item"}}}}},
		{"FunctionCallOutputParts", responses.ResponseInputParam{responses.ResponseInputItemParamOfFunctionCall(`{}`, "call_1", "screenshot"), screenshot},
			[]store.NewMessage{
				{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "call_1", Name: "screenshot", Arguments: `{}`}}},
				{Role: store.RoleTool, ToolCallID: "call_1", ToolName: "screenshot", Parts: []store.Part{
					{Type: store.PartToolResult, ToolCallID: "call_1", Text: "the screen:"},
					{Type: store.PartImage, MediaType: "image/jpeg", URL: "data:image/jpeg;base64," + jpegB64, Detail: "low"}}},
			}},
	}
}

// Every case converts to the parts named, and back — the way the store
// returns them — to the same request on the wire.
func TestResponsesParts(t *testing.T) {
	for _, tt := range responsesPartsCases() {
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

// The same cases through a real SQLite store.
func TestResponsesPartsRoundTripThroughStore(t *testing.T) {
	for _, tt := range responsesPartsCases() {
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

// An Anthropic turn (thinking, text and tool_use interleaved) goes to the
// Responses API as its text then its calls; the signed thinking, which
// OpenAI cannot take, is left out.
func TestResponsesFromStore_ForeignParts(t *testing.T) {
	in := []store.Message{{Role: store.RoleAssistant, Content: "First.\nThen.",
		ReasoningDetails: `[{"type":"thinking","thinking":"t","signature":"sig"}]`,
		Parts: []store.Part{{Type: store.PartText, Text: "First."}, {Type: store.PartToolUse, ToolCallID: "toolu_1", Name: "f", Input: `{}`},
			{Type: store.PartText, Text: "Then."}}}}
	want := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("First.\nThen.", responses.EasyInputMessageRoleAssistant),
		responses.ResponseInputItemParamOfFunctionCall(`{}`, "toolu_1", "f")}
	out, err := convert.ResponsesFromStore(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, want), wire(t, out)); diff != "" {
		t.Errorf("ResponsesFromStore (-want +got):\n%s", diff)
	}
	if _, err := convert.ResponsesFromStore([]store.Message{{Role: store.RoleAssistant,
		Parts: []store.Part{{Type: store.PartImage, MediaType: "image/png", URL: "https://x/a.png"}}}}); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "assistant") {
		t.Errorf("ResponsesFromStore(an assistant image) = %v, want ErrInvalidInput naming the assistant message", err)
	}
}
