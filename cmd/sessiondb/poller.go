package main

// The network poller is made before any package opens a file (see
// package earlypoller: a poller made inside an open at the open-file
// limit is a fatal runtime dump, issue 38).
import _ "github.com/sessiondb/sessiondb/cmd/sessiondb/internal/earlypoller"
