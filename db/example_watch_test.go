package db_test

import (
	"context"
	"fmt"
	"log"

	"github.com/sessiondb/sessiondb/db"
)

// Following a conversation: the messages already there, then each one
// another writer (here a goroutine; as well another process, or on
// PostgreSQL another machine) commits, until the context ends.
func ExampleStore_WatchMessages() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	store, done := openExample(ctx)
	defer done()
	store.CreateSession(ctx, db.NewSession{ID: "chat", Source: "cli"})
	store.AppendMessage(ctx, "chat", db.NewMessage{Role: db.RoleUser, Content: "Is the build green?"})

	go store.AppendMessage(ctx, "chat", db.NewMessage{Role: db.RoleAssistant, Content: "Yes, since 14:02."})
	for m, err := range store.WatchMessages(ctx, "chat", 0) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", m.Role, m.Content)
		if m.Role == db.RoleAssistant {
			stop() // or break: either ends the stream without an error
		}
	}
	// Output:
	// user: Is the build green?
	// assistant: Yes, since 14:02.
}
