package db_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// appendTurn is a gateway's append: the message carries the chat
// platform's update id as its idempotency key, so every failure the key
// makes safe to repeat — a lock held past patience, a full disk, and a
// commit whose outcome is unknown — is retried, with a growing pause, for
// as long as ctx allows. Anything else (an unknown session, bad input, a
// closed store) is returned at once.
func appendTurn(ctx context.Context, s *db.Store, sessionID string, m db.NewMessage) (int64, error) {
	pause := 50 * time.Millisecond
	for {
		id, err := s.AppendMessage(ctx, sessionID, m)
		if err == nil || !db.RetryableKeyed(err) { // db.Retryable for a call without a key
			return id, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// A gateway appends with retries: the platform delivers update 42 twice
// (the first answer was lost), and the store keeps it once.
func ExampleRetryableKeyed() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	if _, err := store.CreateSession(ctx, db.NewSession{ID: "telegram:chat:7", Source: "gateway"}); err != nil {
		log.Fatal(err)
	}

	update := db.NewMessage{Role: db.RoleUser, Content: "Why does the build fail?", IdempotencyKey: "telegram:update:42"}
	first, err := appendTurn(ctx, store, "telegram:chat:7", update)
	if err != nil {
		log.Fatal(err)
	}
	again, _ := appendTurn(ctx, store, "telegram:chat:7", update) // the re-delivery
	msgs, _ := store.Messages(ctx, "telegram:chat:7", db.MessageQuery{})
	fmt.Println("same id:", first == again, "- messages stored:", len(msgs))

	_, err = appendTurn(ctx, store, "telegram:chat:8", update)
	fmt.Println("unknown session retried:", db.RetryableKeyed(err))
	// Output:
	// same id: true - messages stored: 1
	// unknown session retried: false
}
