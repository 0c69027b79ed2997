package ui

import (
	"cmp"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/sessiondb/sessiondb/store"
)

// sessionsData is the session list.
type sessionsData struct {
	Sessions []store.SessionSummary
	Counts   store.SessionCounts
	Sources  []option
	Users    []option
	// The filters as given, for the form.
	Source, User, Archived string
	Children, Hidden       bool
	// Next is the link to the next page ("" on the last); Top back to the
	// first; Paged says this is not the first page.
	Next, Top string
	Paged     bool
}

// option is one choice of a filter, with how many sessions it selects.
type option struct {
	Value    string
	Label    string
	Count    int64
	Selected bool
}

// maxOptions bounds a filter's choices: the most common, the rest reached
// by typing the value in the URL.
const maxOptions = 200

// handleSessions lists sessions for a picker: pinned first, then newest
// activity first, 50 a page, keyset-paged (as deep as 10,000 sessions and
// beyond at the same cost), filtered by source, user, archived, and
// whether child and hidden sessions are listed.
func (srv *Server) handleSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := sessionsData{Source: q.Get("source"), User: q.Get("user"), Archived: q.Get("archived"),
		Children: q.Get("children") == "on", Hidden: q.Get("hidden") == "on", Paged: q.Get("cursor") != ""}
	rq := store.RecentQuery{UserID: d.User, PinnedFirst: true, Cursor: q.Get("cursor"),
		IncludeChildren: d.Children, IncludeHidden: d.Hidden}
	if d.Source != "" {
		rq.Sources = []string{d.Source}
	}
	switch d.Archived {
	case "only":
		rq.Archived = ptr(true)
	case "", "hide":
		d.Archived = "hide"
		rq.Archived = ptr(false)
	case "any":
	default:
		srv.fail(w, r, badParam("archived", d.Archived))
		return
	}
	p, err := srv.store.RecentSessions(r.Context(), rq)
	if err != nil {
		srv.fail(w, r, err)
		return
	}
	d.Sessions = p.Sessions
	// The choices count every session of the other filters, so a source
	// is offered whatever user is chosen, and the other way round.
	all := rq
	all.Sources, all.UserID = nil, ""
	if d.Counts, err = srv.store.CountSessions(r.Context(), all); err != nil {
		srv.fail(w, r, err)
		return
	}
	d.Sources = options(d.Counts.BySource, d.Source, "(any source)")
	d.Users = options(d.Counts.ByUser, d.User, "(any user)")
	if p.Next != "" {
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("cursor", p.Next)
		d.Next = "/?" + next.Encode()
	}
	top := url.Values{}
	for k, v := range q {
		top[k] = v
	}
	top.Del("cursor")
	d.Top = "/?" + top.Encode()
	srv.render(w, r, http.StatusOK, "sessions", page{Title: "Sessions", Nav: "sessions", Data: d})
}

// options turns counts into a filter's choices, the most sessions first,
// led by "any" and keeping the chosen value even when it counts none.
func options(counts map[string]int64, chosen, anyLabel string) []option {
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	if len(keys) > maxOptions {
		keys = keys[:maxOptions]
	}
	if chosen != "" && !slices.Contains(keys, chosen) {
		keys = append(keys, chosen)
	}
	out := []option{{Label: anyLabel, Selected: chosen == ""}}
	for _, k := range keys {
		if k == "" {
			continue // sessions without a user: the store's filter cannot select them alone
		}
		out = append(out, option{Value: k, Label: visible(k), Count: counts[k], Selected: k == chosen})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
