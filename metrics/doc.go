// Package metrics is the stores' counters in one engine-neutral shape,
// for exporters to read: each engine's Store has a Metrics method that
// returns a Snapshot, and an exporter (the Prometheus collector in the
// module github.com/sessiondb/sessiondb/metrics/prometheus) turns it into
// its own instruments. The package links nothing but the standard library,
// so an engine can fill it in and a program that exports nothing pays for
// no exporter.
package metrics
