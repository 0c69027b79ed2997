package db

// Regenerate the flattened schema from migrations/, then sqlc's code from
// schema/ and queries/, then the engine seam's typed queries from sqlc's
// (store/driver/queries.go and executor_gen.go), and the PostgreSQL
// engine's executor over pggen (pg/executor_gen.go), then both engines'
// forwarding methods for the domain's verbs (verbs_gen.go), which let go
// doc list them. CI runs this and fails on any diff.
//
//go:generate go run ./internal/schemagen -o ../schema/schema.sql
//go:generate go tool -modfile=../tools/go.mod sqlc generate -f ../sqlc.yaml
//go:generate go run ./internal/drivergen
//go:generate go run ./internal/drivergen -pg ../pg/executor_gen.go
//go:generate go run ./internal/verbgen
//go:generate go run ./internal/verbgen -pkg ../pg -out ../pg/verbs_gen.go
