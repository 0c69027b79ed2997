package db_test

import (
	"context"
	"fmt"
	"log"

	"github.com/sessiondb/sessiondb/db"
)

// Resume a conversation a person names by its title: compression has just
// continued it in a child that holds only the summary, so new turns go to
// the tip while the turns to show are the parent's.
func ExampleStore_Resume() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	store.CreateSession(ctx, db.NewSession{ID: "20261101-a1", Source: "cli", Title: "Fix the build"})
	store.AppendMessage(ctx, "20261101-a1", db.NewMessage{Role: db.RoleUser, Content: "Why does the build fail?"})

	holder := db.NewHolder("compressor")
	store.AcquireCompressionLock(ctx, "20261101-a1", holder, 0)
	w, _ := store.ActiveWatermark(ctx, "20261101-a1")
	store.PublishCompressionChild(ctx, "20261101-a1", db.Continuation{Holder: holder, Watermark: w,
		Child:    db.NewSession{ID: "20261101-a2"},
		Messages: []db.NewMessage{{Role: db.RoleAssistant, Content: "Summary: a missing import.", Summary: true}}})

	named, err := store.SessionByTitle(ctx, "", "Fix the build") // the newest continuation
	if err != nil {
		log.Fatal(err)
	}
	rp, err := store.Resume(ctx, named.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("by title:", named.ID, named.Title)
	fmt.Println("append to:", rp.Tip.ID)
	fmt.Println("show turns of:", rp.Turns.ID)

	id, _ := store.ResolveSessionID(ctx, "20261101-a") // two sessions start so
	fmt.Println("prefix resolved:", id != "")
	// Output:
	// by title: 20261101-a2 Fix the build #2
	// append to: 20261101-a2
	// show turns of: 20261101-a1
	// prefix resolved: false
}
