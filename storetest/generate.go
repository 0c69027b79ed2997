package storetest

//go:generate go run ./internal/gensuite
