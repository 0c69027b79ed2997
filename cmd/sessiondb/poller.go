package main

import "time"

// The Go runtime makes its network poller (on Linux an epoll descriptor
// and an eventfd) lazily, when the first file is opened or the first
// timer starts, and a failure there is a fatal runtime dump, not an
// error. At a low open-file limit (ulimit -n 7) the runtime's own cgroup
// files and the store's first opens took the last descriptors, so the
// poller's creation, inside a later open, died that way instead of the
// open failing with EMFILE, which the store reports as "too many open
// files" (issue 38). A timer started before anything is opened makes the
// poller while its descriptors are free, without holding one of its own.
func init() { time.AfterFunc(time.Hour, func() {}).Stop() }
