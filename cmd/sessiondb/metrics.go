package main

// metrics.go is --metrics-addr on the long-running commands (mcp, ui,
// follow): the store's counters served for Prometheus at
// http://ADDR/metrics while the command runs, through the collector
// module (metrics/prometheus), which the CLI may link and the library
// never does.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sessiondb/sessiondb/metrics"
	sessionprom "github.com/sessiondb/sessiondb/metrics/prometheus"
)

// addMetricsFlag registers --metrics-addr on fs.
func addMetricsFlag(fs *flag.FlagSet) *string {
	return fs.String("metrics-addr", "", "serve Prometheus metrics at http://`host:port`/metrics while the command runs "+
		"(a bare :port listens on 127.0.0.1; port 0: any free one; the address is printed on stderr)")
}

// metricsListenAddr is where --metrics-addr listens: a value without a
// host (":9464") means loopback, never every interface; those are asked
// for by name (0.0.0.0:9464, [::]:9464). Empty means no metrics. Commands
// call it before they open the store, so a bad value touches nothing.
func metricsListenAddr(flagValue string) (string, error) {
	if flagValue == "" {
		return "", nil
	}
	host, port, err := net.SplitHostPort(flagValue)
	if err != nil {
		return "", usagef("--metrics-addr %q: want host:port or :port (%v)", flagValue, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// serveMetrics serves src's metrics (and the process's and Go runtime's)
// on listen (metricsListenAddr's) until the returned stop is called. An
// empty listen serves nothing.
func serveMetrics(e *env, command, listen string, src metrics.Source) (stop func(), err error) {
	if listen == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("%s: --metrics-addr: %w", command, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(sessionprom.NewCollector(src), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(e.stderr, "sessiondb %s: metrics server: %v\n", command, err)
		}
	}()
	fmt.Fprintf(e.stderr, "sessiondb %s: metrics at http://%s/metrics\n", command, ln.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx) // a scrape in flight gets 2 s to finish
		<-done
	}, nil
}
