// Package earlypoller makes the Go runtime's network poller before any
// other package opens a file. Importing it is all it takes.
//
// The runtime makes its poller (on Linux an epoll descriptor and an
// eventfd) lazily, when the first file is opened or the first timer
// starts, and a failure there is a fatal runtime dump, not an error. At a
// low open-file limit (ulimit -n 7) the runtime's own cgroup files and the
// store's first opens took the last descriptors, so the poller's creation,
// inside a later open, died that way instead of the open failing with
// EMFILE, which the store reports as "too many open files" (issue 38). A
// timer started before anything is opened makes the poller while its
// descriptors are free, without holding one of its own.
//
// It is a package of its own, not an init in package main, because some
// dependencies open files in their own init (protobuf's detrand opens the
// executable, linked with the Prometheus client for --metrics-addr), and
// package main is initialised last. Packages are initialised in the order
// of their import paths among those ready; this one needs only package
// time and sorts before google.golang.org/..., so its init runs first.
package earlypoller

import "time"

func init() { time.AfterFunc(time.Hour, func() {}).Stop() }
