package db_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/sessiondb/sessiondb/db"
)

// A turn: take the conversation's turn lease, append, give it back. A second
// worker asking for the same conversation is told who holds it.
func ExampleStore_AcquireTurnLease() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	store.CreateSession(ctx, db.NewSession{ID: "chat", Source: "gateway"})

	me := "worker-1" // db.NewHolder("worker") names this process, so a crash frees it early
	_, got, err := store.AcquireTurnLease(ctx, "chat", me, 0)
	if err != nil || !got {
		log.Fatal(got, err)
	}
	store.AppendMessage(ctx, "chat", db.NewMessage{Role: db.RoleUser, Content: "hello"})

	cur, got, _ := store.AcquireTurnLease(ctx, "chat", "worker-2", 0)
	fmt.Println("worker-2 got it:", got, "- held by", cur.Holder)

	store.ReleaseTurnLease(ctx, "chat", me)
	_, got, _ = store.AcquireTurnLease(ctx, "chat", "worker-2", 0)
	fmt.Println("after release, worker-2 got it:", got)
	// Output:
	// worker-2 got it: false - held by worker-1
	// after release, worker-2 got it: true
}

// Compression: under the session's compression lock, read the watermark,
// summarise, and continue the conversation in a child. A message that
// arrives meanwhile is carried over; the parent takes no more.
func ExampleStore_PublishCompressionChild() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	store.CreateSession(ctx, db.NewSession{ID: "long", Source: "cli", Title: "Refactor"})
	store.AppendMessages(ctx, "long", []db.NewMessage{
		{Role: db.RoleUser, Content: "Rename Foo to Bar everywhere."},
		{Role: db.RoleAssistant, Content: "Done in 14 files."},
	})

	holder := db.NewHolder("compressor")
	if _, got, err := store.AcquireCompressionLock(ctx, "long", holder, 0); err != nil || !got {
		log.Fatal(got, err)
	}
	defer store.ReleaseCompressionLock(ctx, "long", holder)
	watermark, _ := store.ActiveWatermark(ctx, "long")
	store.AppendMessage(ctx, "long", db.NewMessage{Role: db.RoleUser, Content: "Now run the tests."}) // arrives meanwhile

	child, err := store.PublishCompressionChild(ctx, "long", db.Continuation{
		Holder: holder, Watermark: watermark, Child: db.NewSession{ID: "long-2"},
		Messages: []db.NewMessage{{Role: db.RoleAssistant, Content: "Summary: Foo was renamed to Bar.", Summary: true}},
	})
	if err != nil {
		log.Fatal(err)
	}
	conv, _ := store.Conversation(ctx, child.ID, db.ConversationOptions{})
	for _, m := range conv {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	fmt.Println("the child is titled:", child.Title)
	_, err = store.AppendMessage(ctx, "long", db.NewMessage{Role: db.RoleUser, Content: "late"})
	fmt.Println("append to the parent is refused:", errors.Is(err, db.ErrSessionClosed))
	tip, _ := store.CompressionTip(ctx, "long")
	fmt.Println("tip:", tip.ID)
	// Output:
	// assistant: Summary: Foo was renamed to Bar.
	// user: Now run the tests.
	// the child is titled: Refactor #2
	// append to the parent is refused: true
	// tip: long-2
}

// Rewind: undo back to before a user message, guarded by what the caller
// saw.
func ExampleStore_RewindTo() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	store.CreateSession(ctx, db.NewSession{ID: "r", Source: "cli"})
	ids, _ := store.AppendMessages(ctx, "r", []db.NewMessage{
		{Role: db.RoleUser, Content: "Write a haiku."},
		{Role: db.RoleAssistant, Content: "Old pond..."},
		{Role: db.RoleUser, Content: "Make it about Go."},
		{Role: db.RoleAssistant, Content: "Goroutines wake..."},
	})
	seen := "Make it about Go."
	res, err := store.RewindTo(ctx, "r", ids[2], db.RewindOptions{ExpectedContent: &seen})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rewound:", res.Rewound)
	conv, _ := store.Conversation(ctx, "r", db.ConversationOptions{})
	for _, m := range conv {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// rewound: 2
	// user: Write a haiku.
	// assistant: Old pond...
}

// Delete: a session goes with its delegate (sub-agent) sessions; other
// children stay, unlinked.
func ExampleStore_DeleteSession() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	store.CreateSession(ctx, db.NewSession{ID: "main", Source: "cli"})
	store.CreateSession(ctx, db.NewSession{ID: "helper", Source: "cli", ParentID: "main", Kind: db.ChildDelegate})
	store.CreateSession(ctx, db.NewSession{ID: "fork", Source: "cli", ParentID: "main", Kind: db.ChildBranch})

	set, _ := store.DeletionSet(ctx, "main")
	deleted, err := store.DeleteSession(ctx, "main", db.DeleteOptions{ExpectedIDs: set})
	if err != nil {
		log.Fatal(err)
	}
	fork, _ := store.Session(ctx, "fork")
	fmt.Println("deleted:", deleted)
	fmt.Printf("fork kept, parent %q\n", fork.ParentID)
	// Output:
	// deleted: [main helper]
	// fork kept, parent ""
}
