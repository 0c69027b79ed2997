package anthropic_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	convert "github.com/sessiondb/sessiondb/convert/anthropic"
	"github.com/sessiondb/sessiondb/store"
)

// cachedFor is a cache_control breakpoint of a ttl ("" for the default).
func cachedFor(ttl anthropic.CacheControlEphemeralTTL) anthropic.CacheControlEphemeralParam {
	c := anthropic.NewCacheControlEphemeralParam()
	c.TTL = ttl
	return c
}

// grassCitation cites a document's first sentence, as the API returns it.
var grassCitation = anthropic.TextCitationParamUnion{OfCharLocation: &anthropic.CitationCharLocationParam{
	CitedText: "Grass is green.", DocumentIndex: 0, DocumentTitle: anthropic.String("notes"), StartCharIndex: 0, EndCharIndex: 15}}

// attributesCases are messages whose blocks carry what the store keeps in
// Part.Attributes — cache_control breakpoints, citations, a document's
// citations config and context — each with the messages ToStore gives.
// TestParts and TestPartsRoundTripThroughStore run them.
func attributesCases() []struct {
	name string
	in   []anthropic.MessageParam
	want []store.NewMessage
} {
	const (
		cache   = `{"cache_control":{"type":"ephemeral"}}`
		cache1h = `{"cache_control":{"ttl":"1h","type":"ephemeral"}}`
	)
	cachedImage := anthropic.NewImageBlockBase64("image/png", png)
	cachedImage.OfImage.CacheControl = cachedFor("")
	doc := titled(anthropic.NewDocumentBlock(anthropic.PlainTextSourceParam{Data: "Grass is green."}), "notes")
	doc.OfDocument.Citations = anthropic.CitationsConfigParam{Enabled: anthropic.Bool(true)}
	doc.OfDocument.Context = anthropic.String("from the wiki")
	doc.OfDocument.CacheControl = cachedFor(anthropic.CacheControlEphemeralTTLTTL1h)
	cited := anthropic.TextBlockParam{Text: "Grass is green.", Citations: []anthropic.TextCitationParamUnion{grassCitation}}
	cachedCall := anthropic.NewToolUseBlock("toolu_1", json.RawMessage(`{"q": "grass"}`), "search")
	cachedCall.OfToolUse.CacheControl = cachedFor("")
	cachedResult := toolResult("toolu_1", false, resultText("green"))
	cachedResult.OfToolResult.CacheControl = cachedFor("")
	resultOfCachedText := toolResult("toolu_2", false, anthropic.ToolResultBlockParamContentUnion{
		OfText: &anthropic.TextBlockParam{Text: "blue", CacheControl: cachedFor("")}})
	return []struct {
		name string
		in   []anthropic.MessageParam
		want []store.NewMessage
	}{
		// One text block would be Content; with a breakpoint it is a part.
		{"SystemCacheControl", []anthropic.MessageParam{{OfSystem: &anthropic.SystemMessageParam{Content: []anthropic.TextBlockParam{
			{Text: "You are terse.", CacheControl: cachedFor(anthropic.CacheControlEphemeralTTLTTL1h)}}}}},
			[]store.NewMessage{{Role: store.RoleSystem, Parts: []store.Part{{Type: store.PartText, Text: "You are terse.", Attributes: cache1h}}}}},
		{"UserCacheControl", []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.ContentBlockParamUnion{OfText: &anthropic.TextBlockParam{Text: "Long context.", CacheControl: cachedFor("")}}),
			anthropic.NewUserMessage(anthropic.NewTextBlock("Look:"), cachedImage)},
			[]store.NewMessage{
				{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartText, Text: "Long context.", Attributes: cache}}},
				{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartText, Text: "Look:"},
					{Type: store.PartImage, MediaType: "image/png", URL: "data:image/png;base64," + png, Attributes: cache}}}}},
		{"DocumentCitationsAndContext", []anthropic.MessageParam{anthropic.NewUserMessage(doc, anthropic.NewTextBlock("What colour is grass?"))},
			[]store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{
				{Type: store.PartFile, MediaType: "text/plain", URL: "data:text/plain;base64,R3Jhc3MgaXMgZ3JlZW4u", Name: "notes",
					Attributes: `{"cache_control":{"ttl":"1h","type":"ephemeral"},"citations":{"enabled":true},"context":"from the wiki"}`},
				{Type: store.PartText, Text: "What colour is grass?"}}}}},
		// Cited text and a cached call make the assistant message parts.
		{"AssistantCitationsAndCachedCall", []anthropic.MessageParam{anthropic.NewAssistantMessage(anthropic.ContentBlockParamUnion{OfText: &cited}, cachedCall)},
			[]store.NewMessage{{Role: store.RoleAssistant, Parts: []store.Part{
				{Type: store.PartText, Text: "Grass is green.", Attributes: `{"citations":[{"document_title":"notes","cited_text":"Grass is green.",` +
					`"document_index":0,"end_char_index":15,"start_char_index":0,"type":"char_location"}]}`},
				{Type: store.PartToolUse, ToolCallID: "toolu_1", Name: "search", Input: `{"q": "grass"}`, Attributes: cache}}}}},
		// A tool_result's breakpoint is on its tool_result part; a cached
		// text inside it is a part of its own.
		{"ToolResultCacheControl", []anthropic.MessageParam{anthropic.NewUserMessage(cachedResult, resultOfCachedText)},
			[]store.NewMessage{
				{Role: store.RoleTool, ToolCallID: "toolu_1", Parts: []store.Part{{Type: store.PartToolResult, ToolCallID: "toolu_1", Text: "green", Attributes: cache}}},
				{Role: store.RoleTool, ToolCallID: "toolu_2", Parts: []store.Part{{Type: store.PartToolResult, ToolCallID: "toolu_2"},
					{Type: store.PartText, Text: "blue", Attributes: cache}}}}},
	}
}

// Another provider's attributes (an OpenAI message's phase) are left out;
// attributes that do not fit the block (citations that are not a list, a
// context that is not text) are an error, not a drop.
func TestFromStore_PartAttributes(t *testing.T) {
	out, err := convert.FromStore([]store.Message{{Role: store.RoleAssistant, Content: "Done.",
		Parts: []store.Part{{Type: store.PartText, Text: "Done.", ItemID: "msg_1", Attributes: `{"phase":"final_answer","status":"incomplete"}`}}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, []anthropic.MessageParam{anthropic.NewAssistantMessage(anthropic.NewTextBlock("Done."))}), wire(t, out)); diff != "" {
		t.Errorf("FromStore (-want +got):\n%s", diff)
	}
	for name, p := range map[string]store.Part{
		"TextCitationsNotAList":     {Type: store.PartText, Text: "x", Attributes: `{"citations":{"enabled":true}}`},
		"DocumentContextNotAString": {Type: store.PartFile, MediaType: "application/pdf", URL: "https://example.com/a.pdf", Attributes: `{"context":1}`},
	} {
		t.Run(name, func(t *testing.T) {
			if out, err := convert.FromStore([]store.Message{{Role: store.RoleUser, Parts: []store.Part{p}}}); !errors.Is(err, store.ErrInvalidInput) {
				t.Errorf("FromStore = %+v, %v; want ErrInvalidInput", out, err)
			}
		})
	}
}
