package db

// Regenerate the flattened schema from migrations/, then sqlc's code from
// schema/ and queries/. CI runs this and fails on any diff.
//
//go:generate go run ./internal/schemagen -o ../schema/schema.sql
//go:generate go tool -modfile=../tools/go.mod sqlc generate -f ../sqlc.yaml
