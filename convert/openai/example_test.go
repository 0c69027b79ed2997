package openai_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	convert "github.com/sessiondb/sessiondb/convert/openai"
	"github.com/sessiondb/sessiondb/db"
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
		panic(err) // an image part, the developer role…: not kept yet, and said so
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
