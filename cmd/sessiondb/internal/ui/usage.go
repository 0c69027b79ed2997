package ui

import (
	"net/http"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// usageData is the usage page.
type usageData struct {
	Source, Since string
	Total         store.Usage
	Models        []store.ModelUsage
	Providers     []store.ProviderUsage
	Chart         chart
}

// sinceChoices are the periods the usage page offers.
var sinceChoices = map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}

// handleUsage shows usage across the store (or one source, or a recent
// period): the main-loop totals, a chart and a table per model and task,
// and the sums per billing provider.
func (srv *Server) handleUsage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := usageData{Source: q.Get("source"), Since: q.Get("since")}
	f := store.UsageFilter{Source: d.Source}
	if d.Since != "" {
		dur, ok := sinceChoices[d.Since]
		if !ok {
			srv.fail(w, r, badParam("since", d.Since))
			return
		}
		f.Since = time.Now().Add(-dur)
	}
	var err error
	if d.Total, d.Models, err = srv.store.UsageTotals(r.Context(), f); err != nil {
		srv.fail(w, r, err)
		return
	}
	if d.Providers, err = srv.store.UsageByProvider(r.Context(), f); err != nil {
		srv.fail(w, r, err)
		return
	}
	d.Chart = modelChart("Tokens by model and task", d.Models)
	srv.render(w, r, http.StatusOK, "usage", page{Title: "Usage", Nav: "usage", Data: d})
}
