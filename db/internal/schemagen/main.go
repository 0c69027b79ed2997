// Command schemagen writes schema/schema.sql: the schema that applying
// every migration produces, flattened, for sqlc to read. Run it through
// `go generate ./...`; a test fails when the committed file is stale.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/sessiondb/sessiondb/db"
)

func main() {
	out := flag.String("o", "schema/schema.sql", "output file")
	flag.Parse()
	text, err := db.SchemaSQL(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
