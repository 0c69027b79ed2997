package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/anthropics/anthropic-sdk-go/v2"
	convert "github.com/sessiondb/sessiondb/convert/anthropic"
	"github.com/sessiondb/sessiondb/db"
)

// Keep an Anthropic conversation, thinking signature included, and send
// it back on the next turn.
func Example() {
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

	turn := []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("What time is it in Tokyo?")),
		anthropic.NewAssistantMessage(
			anthropic.NewThinkingBlock("EqQBCkYIBxgCKkB=", "Use the clock tool."),
			anthropic.NewToolUseBlock("toolu_1", json.RawMessage(`{"tz":"Asia/Tokyo"}`), "clock"),
		),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_1", "21:04", false)),
	}
	msgs, err := convert.ToStore(turn)
	if err != nil {
		panic(err) // server tool blocks, search results…: not modelled, and said so
	}
	if _, err := s.AppendMessages(ctx, "chat-1", msgs); err != nil {
		panic(err)
	}

	stored, err := s.Messages(ctx, "chat-1", db.MessageQuery{})
	if err != nil {
		panic(err)
	}
	params, err := convert.FromStore(stored) // the next request's Messages
	if err != nil {
		panic(err)
	}
	thinking := params[1].OfAssistant.Content[0].OfThinking
	fmt.Println(len(params), "messages; signature", thinking.Signature)
	fmt.Println("tool result for", params[2].OfUser.Content[0].OfToolResult.ToolUseID)
	// Output:
	// 3 messages; signature EqQBCkYIBxgCKkB=
	// tool result for toolu_1
}

// An image the user sent is kept as an ordered part referencing it (a
// base64 source as a data: URL); the message's plain text, for search and
// string callers, is its text alone.
func ExampleToStore_image() {
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

	msgs, err := convert.ToStore([]anthropic.MessageParam{anthropic.NewUserMessage(
		anthropic.NewTextBlock("What is in this picture?"),
		anthropic.NewImageBlockBase64("image/png", "iVBORw0KGgo="),
	)})
	if err != nil {
		panic(err)
	}
	for _, p := range msgs[0].Parts {
		fmt.Println(p.Type, p.MediaType, p.Text+p.URL)
	}
	if _, err := s.AppendMessages(ctx, "chat-1", msgs); err != nil {
		panic(err)
	}
	stored, err := s.Messages(ctx, "chat-1", db.MessageQuery{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("searchable text: %q\n", stored[0].Content)
	// Output:
	// text  What is in this picture?
	// image image/png data:image/png;base64,iVBORw0KGgo=
	// searchable text: "What is in this picture?"
}

// Interleaved thinking — the model thinks again between its tool calls —
// is kept block by block in order: each thinking block a reasoning part
// holding its JSON (the signature byte-exact), which the next request
// sends back where it was.
func ExampleToStore_interleavedThinking() {
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

	msgs, err := convert.ToStore([]anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("Time and weather in Tokyo?")),
		anthropic.NewAssistantMessage(
			anthropic.NewThinkingBlock("EqQBCkYIBxgCKkB=", "The clock first."),
			anthropic.NewToolUseBlock("toolu_1", json.RawMessage(`{"tz":"Asia/Tokyo"}`), "clock"),
			anthropic.NewThinkingBlock("EpYBCkYIBxgCKkD=", "Then the weather."),
			anthropic.NewToolUseBlock("toolu_2", json.RawMessage(`{"city":"Tokyo"}`), "weather"),
		),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_1", "21:04", false),
			anthropic.NewToolResultBlock("toolu_2", "18°C", false)),
	})
	if err != nil {
		panic(err)
	}
	if _, err := s.AppendMessages(ctx, "chat-1", msgs); err != nil {
		panic(err)
	}
	stored, err := s.Messages(ctx, "chat-1", db.MessageQuery{})
	if err != nil {
		panic(err)
	}
	for _, p := range stored[1].Parts {
		fmt.Println(p.Type, p.Text+p.ToolCallID)
	}
	params, err := convert.FromStore(stored)
	if err != nil {
		panic(err)
	}
	fmt.Println("resent:", *params[1].OfAssistant.Content[2].GetType(), params[1].OfAssistant.Content[2].OfThinking.Signature)
	// Output:
	// reasoning The clock first.
	// tool_use toolu_1
	// reasoning Then the weather.
	// tool_use toolu_2
	// resent: thinking EpYBCkYIBxgCKkD=
}
