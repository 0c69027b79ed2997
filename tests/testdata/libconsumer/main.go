// Command libconsumer is a program that uses only the store, as a library
// user would: TestLibraryLinksOnlyTheStore checks what it links.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/sessiondb/sessiondb/db"
)

func main() {
	ctx := context.Background()
	s, err := db.Open(ctx, os.Args[1], db.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer s.Close()
	s.EnsureSession(ctx, db.NewSession{ID: "lib", Source: "lib"})
	s.AppendMessage(ctx, "lib", db.NewMessage{Role: db.RoleUser, Content: "hello"})
	hits, err := s.Search(ctx, "hello", db.SearchOptions{})
	fmt.Println(len(hits), err)
}
