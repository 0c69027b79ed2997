package db_test

import (
	"context"
	"fmt"
	"log"

	"github.com/sessiondb/sessiondb/db"
)

// A sidebar: one row per conversation (a compressed one shows as its tip),
// newest activity first, pinned on top, with a preview and the totals.
func ExampleStore_RecentSessions() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	for _, n := range []db.NewSession{
		{ID: "trip", Source: "telegram", UserID: "ann", Title: "Trip plans"},
		{ID: "build", Source: "cli", UserID: "ann", Title: "Fix the build"},
		{ID: "cron", Source: "cron", UserID: "ann"},
	} {
		store.CreateSession(ctx, n)
	}
	store.AppendMessage(ctx, "build", db.NewMessage{Role: db.RoleUser, Content: "Why does\nthe build fail?"})
	store.SetPinned(ctx, "trip", true)

	q := db.RecentQuery{UserID: "ann", ExcludeSources: []string{"cron"}, PinnedFirst: true, Conversations: true, Limit: 20}
	page, err := store.RecentSessions(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range page.Sessions {
		fmt.Printf("%-5s pinned=%-5v %q %q\n", s.ID, s.Pinned, s.Title, s.Preview)
	}
	counts, _ := store.CountSessions(ctx, q)
	fmt.Println("total:", counts.Total, "more pages:", page.Next != "")
	// Output:
	// trip  pinned=true  "Trip plans" ""
	// build pinned=false "Fix the build" "Why does the build fail?"
	// total: 2 more pages: false
}
