package db

// Regenerate the flattened schema from migrations/, then sqlc's code from
// schema/ and queries/, then the engine seam's typed queries from sqlc's
// (store/driver/queries.go and executor_gen.go), and the PostgreSQL
// engine's executor over pggen (pg/executor_gen.go). CI runs this and
// fails on any diff.
//
//go:generate go run ./internal/schemagen -o ../schema/schema.sql
//go:generate go tool -modfile=../tools/go.mod sqlc generate -f ../sqlc.yaml
//go:generate go run ./internal/drivergen
//go:generate go run ./internal/drivergen -pg ../pg/executor_gen.go
