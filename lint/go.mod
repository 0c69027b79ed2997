module github.com/sessiondb/sessiondb/lint

go 1.26.3

require (
	github.com/google/go-cmp v0.7.0
	golang.org/x/tools v0.52.0
	gvisor.dev/gvisor v0.0.0-20260905035102-160fafc42237
)

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
