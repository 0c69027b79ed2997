// Package prometheus exports a sessiondb store's counters as a Prometheus
// collector. It is a module of its own so that the store's library never
// links the Prometheus client: a program that wants the metrics imports
// this package and registers a Collector over its store.
//
//	st, _ := db.Open(ctx, path, db.Options{})
//	reg := prometheus.NewRegistry() // github.com/prometheus/client_golang/prometheus
//	reg.MustRegister(sessionprom.NewCollector(st))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Each scrape reads one metrics.Snapshot (on SQLite, one small read of the
// full-text index queue). docs/METRICS.md lists every metric. To tell
// several stores of one process apart, register each collector through
// prometheus.WrapRegistererWith with a label of your own.
package prometheus
