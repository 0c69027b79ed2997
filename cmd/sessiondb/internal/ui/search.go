package ui

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/sessiondb/sessiondb/store"
)

// searchData is the search page.
type searchData struct {
	Query, Role, Sort, SessionID string
	Searched                     bool
	Hits                         []hitView
	Offset                       int
	Next, Prev                   string
}

// hitView is one search hit: its snippet cut into plain and matched runs.
type hitView struct {
	store.SearchHit
	Title   string
	Snippet []snippetRun
	Link    string
}

// snippetRun is a run of a snippet; Match runs are shown as <mark>.
type snippetRun struct {
	Text  string
	Match bool
}

const searchPage = 20

// handleSearch finds messages (Store.Search: every term, any text is a
// valid query) and shows each hit's snippet with its matches marked,
// linked to the message in its conversation.
func (srv *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := searchData{Query: q.Get("q"), Role: q.Get("role"), Sort: q.Get("sort"), SessionID: q.Get("session")}
	opts := store.SearchOptions{SessionID: d.SessionID, Limit: searchPage}
	switch d.Sort {
	case "", "relevance":
		d.Sort = "relevance"
	case "newest":
		opts.Sort = store.SortNewest
	case "oldest":
		opts.Sort = store.SortOldest
	default:
		srv.fail(w, r, badParam("sort", d.Sort))
		return
	}
	switch store.Role(d.Role) {
	case "":
	case store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleSystem:
		opts.Roles = []store.Role{store.Role(d.Role)}
	default:
		srv.fail(w, r, badParam("role", d.Role))
		return
	}
	if o := q.Get("offset"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil || n < 0 {
			srv.fail(w, r, badParam("offset", o))
			return
		}
		d.Offset = n
		opts.Offset = n
	}
	if d.Query != "" {
		d.Searched = true
		hits, err := srv.store.Search(r.Context(), d.Query, opts)
		if err != nil {
			srv.fail(w, r, err)
			return
		}
		titles := map[string]string{}
		for _, h := range hits {
			t, ok := titles[h.SessionID]
			if !ok {
				if s, err := srv.store.Session(r.Context(), h.SessionID); err == nil {
					t = s.Title
				}
				titles[h.SessionID] = t
			}
			d.Hits = append(d.Hits, hitView{SearchHit: h, Title: sessionTitle(t, h.SessionID),
				Snippet: snippetRuns(h.Snippet, h.Marks), Link: messageURL(h.SessionID, h.MessageID)})
		}
		page := func(offset int) string {
			v := url.Values{}
			for k, vs := range q {
				v[k] = vs
			}
			v.Set("offset", strconv.Itoa(offset))
			return "/search?" + v.Encode()
		}
		if len(hits) == searchPage {
			d.Next = page(d.Offset + searchPage)
		}
		if d.Offset > 0 {
			d.Prev = page(max(0, d.Offset-searchPage))
		}
	}
	srv.render(w, r, http.StatusOK, "search", page{Title: "Search", Nav: "search", Query: d.Query, Data: d})
}

// snippetRuns cuts a snippet at its marks (byte offsets from the store,
// which a stored ">>>" cannot forge), dropping the >>> <<< markers the
// snippet text carries around each mark.
func snippetRuns(snippet string, marks []store.Mark) []snippetRun {
	var out []snippetRun
	at := 0
	for _, m := range marks {
		if m.Start < at || m.End > len(snippet) || m.Start > m.End {
			continue // not a mark of this snippet: show the text plain
		}
		plain := snippet[at:m.Start]
		if len(plain) >= 3 && plain[len(plain)-3:] == ">>>" {
			plain = plain[:len(plain)-3]
		}
		out = append(out, snippetRun{Text: visible(plain)}, snippetRun{Text: visible(snippet[m.Start:m.End]), Match: true})
		at = m.End
		if len(snippet)-at >= 3 && snippet[at:at+3] == "<<<" {
			at += 3
		}
	}
	return append(out, snippetRun{Text: visible(snippet[at:])})
}
