package db_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/sessiondb/sessiondb/db"
)

// A gateway compacts a long conversation in one call: the last turn stays
// verbatim (its tool call and result together), the rest becomes the
// summary its model writes.
func ExampleStore_CompactKeepingLast() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	store.CreateSession(ctx, db.NewSession{ID: "chat", Source: "gateway"})
	store.AppendMessages(ctx, "chat", []db.NewMessage{
		{Role: db.RoleUser, Content: "Rename Foo to Bar."},
		{Role: db.RoleAssistant, Content: "Done: 12 files changed."},
		{Role: db.RoleUser, Content: "Are the tests green?"},
		{Role: db.RoleAssistant, ToolCalls: []db.ToolCall{{ID: "c1", Name: "go_test", Arguments: `{"pkg":"./..."}`}}},
		{Role: db.RoleTool, ToolCallID: "c1", ToolName: "go_test", Content: "ok"},
		{Role: db.RoleAssistant, Content: "Yes, all green."},
	})

	summarize := func(ctx context.Context, replaced []db.Message) (string, error) {
		// A real gateway asks its model; this one lists what it replaces.
		var said []string
		for _, m := range replaced {
			said = append(said, m.Content)
		}
		return "Summary: " + strings.Join(said, " / "), nil
	}
	holder := db.NewHolder("gateway")
	res, err := store.CompactKeepingLast(ctx, "chat", holder, db.KeepPolicy{Turns: 1}, summarize)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("replaced:", res.Compacted, "kept:", len(res.Carried))
	conv, _ := store.Conversation(ctx, "chat", db.ConversationOptions{})
	for _, m := range conv {
		text := m.Content
		if len(m.ToolCalls) > 0 {
			text = "calls " + m.ToolCalls[0].Name
		}
		fmt.Printf("%s: %s\n", m.Role, text)
	}
	// Output:
	// replaced: 2 kept: 4
	// assistant: Summary: Rename Foo to Bar. / Done: 12 files changed.
	// user: Are the tests green?
	// assistant: calls go_test
	// tool: ok
	// assistant: Yes, all green.
}

// A row kept across a continuation is appended again as it was.
func ExampleMessage_AsNew() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	store.CreateSession(ctx, db.NewSession{ID: "a", Source: "cli"})
	store.CreateSession(ctx, db.NewSession{ID: "b", Source: "cli"})
	store.AppendMessage(ctx, "a", db.NewMessage{Role: db.RoleUser, Content: "keep me", TokenCount: 3})
	msgs, _ := store.Messages(ctx, "a", db.MessageQuery{})
	store.AppendMessage(ctx, "b", msgs[0].AsNew())
	copied, _ := store.Messages(ctx, "b", db.MessageQuery{})
	fmt.Println(copied[0].Role, copied[0].Content, copied[0].TokenCount)
	// Output:
	// user keep me 3
}
