package store

import "github.com/sessiondb/sessiondb/internal/proc"

// NewHolder returns a lease holder string naming this process:
//
//	host=build-7:pid=4242:start=918273:nonce=3f9a1c0b7d2e:agent=compressor
//
// A lease normally lives until its TTL runs out. A holder in this form lets
// a waiting process reclaim it early when the engine can prove the
// holder's process gone (the SQLite engine: same host, and no process with
// that pid, or one started at another time, the pid recycled). Any other
// holder string is valid too — it is simply never reclaimed before it
// expires. agent is optional; ':' and '=' in it are replaced with '_'.
func NewHolder(agent string) string { return proc.NewHolder(agent) }
