package benchcorpus

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// Class is one query class of the growth benchmark (issue 37): a query
// and the options it is asked with.
type Class struct {
	Name  string
	Query string
	Opts  store.SearchOptions
}

// Classes are the growth benchmark's query classes, each a kind of search
// a user makes, over Fill's corpus: a rare word (vorakitu, one message in
// thousands), a common word (error, about one in ten), two common words
// (the error: "the" is in most messages, so the index's candidates are
// error's), a phrase, a substring no word matches (the trigram route), a
// CJK term (trigram route), newest first, and the common word filtered by
// source, by role and by session (the corpus's second session, whose ids
// are among the oldest at every size: a search within one conversation).
var Classes = []Class{
	{Name: "rare", Query: "vorakitu"},
	{Name: "common", Query: "error"},
	{Name: "two-common", Query: "the error"},
	{Name: "phrase", Query: `"connection refused"`},
	{Name: "substring", Query: "ubernete"},
	{Name: "cjk", Query: "設定ファイル"},
	{Name: "newest", Query: "error", Opts: store.SearchOptions{Sort: store.SortNewest}},
	{Name: "by-source", Query: "error", Opts: store.SearchOptions{Source: "cli"}},
	{Name: "by-role", Query: "error", Opts: store.SearchOptions{Roles: []store.Role{store.RoleUser}}},
	{Name: "by-session", Query: "error", Opts: store.SearchOptions{SessionID: "bench-00001"}},
}

// Latencies collects each class's search times over rounds of the
// growth benchmark: a round asks every class once, in order, so a burst
// of load falls on all of them alike. Beside each wall time it keeps the
// process's CPU time for the search (class+CPU): on a machine shared with
// other work the wall time says more about the neighbours than about the
// search, and an engine in the process (SQLite) spends all of its work
// there.
type Latencies map[string][]time.Duration

// CPU is the suffix of a class's CPU times in Latencies.
const CPU = "/cpu"

// Round searches s once for every class.
func (l Latencies) Round(ctx context.Context, s *store.Store) error {
	for _, c := range Classes {
		cpu := ProcessCPU()
		t := time.Now()
		if _, err := s.Search(ctx, c.Query, c.Opts); err != nil {
			return fmt.Errorf("%s (%q): %w", c.Name, c.Query, err)
		}
		l[c.Name] = append(l[c.Name], time.Since(t))
		l[c.Name+CPU] = append(l[c.Name+CPU], ProcessCPU()-cpu)
	}
	return nil
}

// Percentile is the p-th percentile (0 to 100) of a class's times.
func (l Latencies) Percentile(class string, p int) time.Duration {
	d := slices.Clone(l[class])
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, len(d)*p/100)]
}

// Table is the classes' p50 and p90 in milliseconds, one line each.
func (l Latencies) Table() string {
	var b strings.Builder
	for _, c := range Classes {
		fmt.Fprintf(&b, "%-11s p50 %7.2f ms  p90 %7.2f ms  (CPU p50 %7.2f ms)\n", c.Name,
			Ms(l.Percentile(c.Name, 50)), Ms(l.Percentile(c.Name, 90)), Ms(l.Percentile(c.Name+CPU, 50)))
	}
	return b.String()
}

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
