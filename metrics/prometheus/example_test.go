package prometheus_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/sessiondb/sessiondb/db"
	sessionprom "github.com/sessiondb/sessiondb/metrics/prometheus"
	"github.com/sessiondb/sessiondb/store"
)

// A store's collector in a registry of the program's own; serve it with
// promhttp.HandlerFor(reg, promhttp.HandlerOpts{}) on /metrics.
func ExampleNewCollector() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	st, err := db.Open(ctx, filepath.Join(dir, "state.db"), db.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	reg := prom.NewRegistry()
	reg.MustRegister(sessionprom.NewCollector(st))

	st.CreateSession(ctx, store.NewSession{ID: "s"})
	st.AppendMessage(ctx, "s", store.NewMessage{Role: store.RoleUser, Content: "hello"})

	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "sessiondb_appends_total" {
			fmt.Println(f.GetName(), f.GetMetric()[0].GetCounter().GetValue())
		}
	}
	// Output: sessiondb_appends_total 1
}
