package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	convert "github.com/sessiondb/sessiondb/convert/openai"
	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

// Keep a chat completions conversation with a tool call and rebuild the
// next request's messages from the store.
func ExampleChatToStore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sessiondb-example")
	defer os.RemoveAll(dir)
	s, err := db.Open(ctx, filepath.Join(dir, "state.db"), db.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "chat-1", Source: "gateway"}); err != nil {
		panic(err)
	}

	call := openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
		ID: "call_1", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "clock", Arguments: `{"tz":"Asia/Tokyo"}`}}}
	msgs, err := convert.ChatToStore([]openai.ChatCompletionMessageParamUnion{
		openai.UserMessage("What time is it in Tokyo?"),
		{OfAssistant: &openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{call}}},
		openai.ToolMessage("21:04", "call_1"),
	})
	if err != nil {
		panic(err) // the developer role, a refusal…: not modelled, and said so
	}
	if _, err := s.AppendMessages(ctx, "chat-1", msgs); err != nil {
		panic(err)
	}
	stored, err := s.Messages(ctx, "chat-1", db.MessageQuery{})
	if err != nil {
		panic(err)
	}
	params, err := convert.ChatFromStore(stored)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(params), "messages; the tool answered", stored[2].ToolName)
	fmt.Println(params[1].OfAssistant.ToolCalls[0].OfFunction.Function.Arguments)
	// Output:
	// 3 messages; the tool answered clock
	// {"tz":"Asia/Tokyo"}
}

// A Responses API turn's reasoning item (with its encrypted content, for
// stateless requests) is one assistant message's ReasoningDetails.
func ExampleResponsesToStore() {
	reasoning := responses.ResponseInputItemParamOfReasoning("rs_1", []responses.ResponseReasoningItemSummaryParam{{Text: "Check the clock."}})
	reasoning.OfReasoning.EncryptedContent = openai.String("gAAAAABo")
	msgs, err := convert.ResponsesToStore(responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("What time is it?", responses.EasyInputMessageRoleUser),
		reasoning,
		responses.ResponseInputItemParamOfMessage("21:04.", responses.EasyInputMessageRoleAssistant),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(msgs), msgs[1].Role, msgs[1].Content, msgs[1].Reasoning)
	fmt.Println(msgs[1].ReasoningDetails)
	// Output:
	// 2 assistant 21:04. Check the clock.
	// [{"id":"rs_1","summary":[{"text":"Check the clock.","type":"summary_text"}],"encrypted_content":"gAAAAABo","type":"reasoning"}]
}

// A user's image (here inline, as a data: URL) is kept as an ordered part
// with its detail; the message's plain text, for search and string
// callers, is its text alone.
func ExampleChatToStore_image() {
	msgs, err := convert.ChatToStore([]openai.ChatCompletionMessageParamUnion{
		openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("What is in this picture?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,iVBORw0KGgo=", Detail: "low"}),
		}),
	})
	if err != nil {
		panic(err)
	}
	for _, p := range msgs[0].Parts {
		fmt.Println(p.Type, p.MediaType, p.Detail, p.Text+p.URL)
	}
	fmt.Printf("searchable text: %q\n", store.PlainText(msgs[0].Parts))
	// Output:
	// text   What is in this picture?
	// image image/png low data:image/png;base64,iVBORw0KGgo=
	// searchable text: "What is in this picture?"
}

// A chat completion's choice is kept with the model that wrote it.
func ExampleChatCompletionToStore() {
	var completion openai.ChatCompletion // as client.Chat.Completions.New returns it
	if err := json.Unmarshal([]byte(`{"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"finish_reason":"stop",
		"message":{"role":"assistant","content":"A cat on a mat.","refusal":null}}]}`), &completion); err != nil {
		panic(err)
	}
	msg, err := convert.ChatCompletionToStore(&completion, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(msg.Role, msg.Model, msg.FinishReason, msg.Content)
	// Output:
	// assistant gpt-4.1-2025-04-14 stop A cat on a mat.
}

// A reasoning model's response is kept with its model and its items' ids
// (msg_…, fc_… besides the call id, the reasoning item as given), which
// the next request must send back with the reasoning they follow.
func ExampleResponseToStore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sessiondb-example")
	defer os.RemoveAll(dir)
	s, err := db.Open(ctx, filepath.Join(dir, "state.db"), db.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "chat-1", Source: "gateway"}); err != nil {
		panic(err)
	}

	var resp responses.Response // as client.Responses.New returns it
	if err := json.Unmarshal([]byte(`{"id":"resp_1","model":"gpt-5-2025-08-07","status":"completed","output":[
		{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Use the clock."}],"encrypted_content":"gAAAAABo"},
		{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Checking.","annotations":[]}]},
		{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"clock","arguments":"{\"tz\":\"Asia/Tokyo\"}"}]}`), &resp); err != nil {
		panic(err)
	}
	msgs, err := convert.ResponseToStore(&resp)
	if err != nil {
		panic(err) // annotations, hosted tools…: not modelled, and said so
	}
	if _, err := s.AppendMessages(ctx, "chat-1", msgs); err != nil {
		panic(err)
	}
	stored, err := s.Messages(ctx, "chat-1", db.MessageQuery{})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(stored), stored[0].Role, stored[0].Model, stored[0].Content)
	items, err := convert.ResponsesFromStore(stored) // the next request's input
	if err != nil {
		panic(err)
	}
	fmt.Println(items[0].OfReasoning.ID, items[1].OfOutputMessage.ID, items[2].OfFunctionCall.ID.Value, items[2].OfFunctionCall.CallID)
	// Output:
	// 1 assistant gpt-5-2025-08-07 Checking.
	// rs_1 msg_1 fc_1 call_1
}
