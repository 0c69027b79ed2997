package eino_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	einoconv "github.com/sessiondb/sessiondb/convert/eino"
	"github.com/sessiondb/sessiondb/db"
)

// An eino agent keeps its conversation in sessiondb: each turn's messages
// are appended as the store's, the next call's history is read back as
// eino's, and a graph's checkpoints live in the same store.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "eino-example")
	defer os.RemoveAll(dir)
	s, err := db.Open(ctx, filepath.Join(dir, "state.db"), db.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	s.CreateSession(ctx, db.NewSession{ID: "chat-1", Source: "eino"})

	// A turn: what the user said and what the model answered.
	turn := []*schema.Message{
		schema.UserMessage("What is the capital of Portugal?"),
		{Role: schema.Assistant, Content: "Lisbon.", ResponseMeta: &schema.ResponseMeta{FinishReason: "stop"}},
	}
	msgs, err := einoconv.ToStore(turn)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, "chat-1", msgs); err != nil {
		log.Fatal(err)
	}

	// The next call's history, from any process that opens the store.
	stored, _ := s.Messages(ctx, "chat-1", db.MessageQuery{})
	history, err := einoconv.FromStore(stored)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range history {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}

	// Graphs compiled with this option checkpoint into the store.
	_ = compose.WithCheckPointStore(einoconv.CheckPoints{Store: s})
	// Output:
	// user: What is the capital of Portugal?
	// assistant: Lisbon.
}
