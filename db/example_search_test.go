package db_test

import (
	"context"
	"fmt"
	"log"

	"github.com/sessiondb/sessiondb/db"
)

func ExampleStore_Search() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	if _, err := store.CreateSession(ctx, db.NewSession{ID: "s1", Source: "cli", Model: "gpt-4o"}); err != nil {
		log.Fatal(err)
	}
	_, err := store.AppendMessages(ctx, "s1", []db.NewMessage{
		{Role: db.RoleUser, Content: "Why does the build fail on CI?"},
		{Role: db.RoleAssistant, Content: "The CI image pins go1.21; the build needs go1.26."},
		{Role: db.RoleTool, ToolName: "shell", Content: "ok  github.com/x/y 0.2s"},
		{Role: db.RoleUser, Content: "ビルドが失敗する理由を検索して"},
	})
	if err != nil {
		log.Fatal(err)
	}

	// Words in any order; a dotted term is matched as written. Any text is
	// a valid query: FTS5 syntax is searched as text, never obeyed.
	hits, err := store.Search(ctx, "build go1.26* (", db.SearchOptions{Context: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s #%d %s: %s\n", h.SessionID, h.MessageID, h.Role, h.Snippet)
		for _, c := range h.Before {
			fmt.Printf("  before: %s: %s\n", c.Role, c.Content)
		}
	}

	// Scripts written without spaces are searched as substrings.
	hits, _ = store.Search(ctx, "失敗", db.SearchOptions{})
	fmt.Println(hits[0].Snippet)

	// Nothing to search for is no hits, not an error.
	hits, err = store.Search(ctx, "()*", db.SearchOptions{})
	fmt.Println(len(hits), err)
	// Output:
	// s1 #2 assistant: The CI image pins go1.21; the >>>build<<< needs >>>go1.26<<<.
	//   before: user: Why does the build fail on CI?
	// ビルドが>>>失敗<<<する理由を検索して
	// 0 <nil>
}

// Paging: every sort is a fixed order, so stepping Offset by Limit visits
// each hit exactly once. Relevance ranks the newest 2000 matches (ties
// newest first); any older ones follow, newest first.
func ExampleStore_Search_paging() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	if _, err := store.CreateSession(ctx, db.NewSession{ID: "s1"}); err != nil {
		log.Fatal(err)
	}
	_, err := store.AppendMessages(ctx, "s1", []db.NewMessage{
		{Role: db.RoleUser, Content: "a flaky test"},
		{Role: db.RoleAssistant, Content: "the flaky test is flaky because of a race"},
		{Role: db.RoleUser, Content: "is it still flaky?"},
		{Role: db.RoleAssistant, Content: "flaky flaky flaky"},
		{Role: db.RoleUser, Content: "fixed the flaky one"},
	})
	if err != nil {
		log.Fatal(err)
	}
	// New messages are indexed in the background; until then Search finds
	// them unranked, ahead of the ranked ones. Index them now to rank all.
	if err := store.IndexNow(ctx); err != nil {
		log.Fatal(err)
	}
	for offset := 0; ; offset += 2 {
		hits, err := store.Search(ctx, "flaky", db.SearchOptions{Limit: 2, Offset: offset})
		if err != nil {
			log.Fatal(err)
		}
		if len(hits) == 0 {
			break
		}
		fmt.Print("page:")
		for _, h := range hits {
			fmt.Printf(" #%d", h.MessageID)
		}
		fmt.Println()
	}
	// Output:
	// page: #4 #1
	// page: #2 #5
	// page: #3
}
