package db_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sessiondb/sessiondb/db"
)

// openExample opens a store in a scratch directory; done closes it and
// removes the directory.
func openExample(ctx context.Context) (store *db.Store, done func()) {
	dir, err := os.MkdirTemp("", "sessiondb-example-")
	if err != nil {
		log.Fatal(err)
	}
	store, err = db.Open(ctx, filepath.Join(dir, "state.db"), db.Options{})
	if err != nil {
		log.Fatal(err)
	}
	return store, func() { store.Close(); os.RemoveAll(dir) }
}

func Example() {
	dir, _ := os.MkdirTemp("", "sessiondb-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	store, err := db.Open(ctx, filepath.Join(dir, "state.db"), db.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	sess, err := store.CreateSession(ctx, db.NewSession{ID: "s1", Source: "cli", Title: "Fix the build"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = store.AppendMessages(ctx, sess.ID, []db.NewMessage{
		{Role: db.RoleUser, Content: "Why does the build fail?"},
		{Role: db.RoleAssistant, Content: "Let me look.",
			ToolCalls: []db.ToolCall{{ID: "c1", Name: "shell", Arguments: `{"cmd":"go build ./..."}`}}},
		{Role: db.RoleTool, ToolName: "shell", ToolCallID: "c1", Content: "main.go:3: undefined: x"},
	})
	if err != nil {
		log.Fatal(err)
	}
	msgs, err := store.Messages(ctx, sess.ID, db.MessageQuery{})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// user: Why does the build fail?
	// assistant: Let me look.
	// tool: main.go:3: undefined: x
}

func ExampleStore_AppendMessage_idempotencyKey() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	if _, _, err := store.EnsureSession(ctx, db.NewSession{ID: "s1", Source: "gateway"}); err != nil {
		log.Fatal(err)
	}

	// A gateway retries a turn after a timeout: the key makes the retry
	// return the first id instead of storing the message twice.
	turn := db.NewMessage{Role: db.RoleUser, Content: "hello", IdempotencyKey: "telegram:update:42"}
	first, _ := store.AppendMessage(ctx, "s1", turn)
	retry, _ := store.AppendMessage(ctx, "s1", turn)
	sess, _ := store.Session(ctx, "s1")
	fmt.Println(first == retry, sess.MessageCount)
	// Output: true 1
}

func ExampleStore_EndSession() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	store.CreateSession(ctx, db.NewSession{ID: "s1"})

	ended, _ := store.EndSession(ctx, "s1", "user_exit")
	again, _ := store.EndSession(ctx, "s1", "idle") // the first reason wins
	sess, _ := store.Session(ctx, "s1")
	fmt.Println(ended, again, sess.EndReason)
	// Output: true false user_exit
}

func ExampleStore_AppendMessage_errors() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()

	_, err := store.AppendMessage(ctx, "no-such-session", db.NewMessage{Role: db.RoleUser, Content: "hi"})
	fmt.Println(errors.Is(err, db.ErrNotFound))
	_, err = store.AppendMessage(ctx, "no-such-session", db.NewMessage{Role: "robot"})
	fmt.Println(errors.Is(err, db.ErrInvalidInput))
	// Output:
	// true
	// true
}
