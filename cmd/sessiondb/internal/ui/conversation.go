package ui

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/sessiondb/sessiondb/store"
)

// conversationData is the conversation page.
type conversationData struct {
	Session  store.Session
	Lineage  []store.Session
	Children []store.Session
	Handoff  store.HandoffState
	Usage    store.Usage
	Models   []store.ModelUsage
	Chart    chart
	Messages []messageView
	// Older and Newer link the pages around this one ("" at either end);
	// First and Last jump to the ends.
	Older, Newer, First, Last string
	// Live is where the page polls for new messages ("" when this is not
	// the newest page).
	Live   string
	PollMS int64
}

// handleConversation shows one page of a session's messages — the newest
// by default; ?before=ID the page before a message, ?after=ID the page
// after one (?after=0: the first page), ?at=ID the page around one —
// with rewound and compacted rows marked, beside its lineage and usage.
func (srv *Server) handleConversation(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	sess, err := srv.store.Session(ctx, id)
	if err != nil {
		srv.fail(w, r, err)
		return
	}
	d := conversationData{Session: sess, PollMS: srv.opts.Poll.Milliseconds()}
	q := r.URL.Query()
	var ms []store.Message
	switch {
	case q.Has("at"):
		var at int64
		if at, err = idParam(q.Get("at")); err == nil {
			ms, err = srv.pageAround(ctx, id, at)
		}
	case q.Has("before"):
		var before int64
		if before, err = idParam(q.Get("before")); err == nil {
			ms, err = srv.pageBefore(ctx, id, before)
		}
	case q.Has("after"):
		var after int64
		if after, err = idParam(q.Get("after")); err == nil {
			ms, err = srv.store.Messages(ctx, id, store.MessageQuery{AfterID: after, Limit: srv.opts.PageSize, IncludeRewound: true})
		}
	default:
		ms, err = srv.pageBefore(ctx, id, 0)
	}
	if err != nil {
		srv.fail(w, r, err)
		return
	}
	if err := srv.conversationContext(ctx, &d, ms); err != nil {
		srv.fail(w, r, err)
		return
	}
	srv.render(w, r, http.StatusOK, "conversation", page{Title: sessionTitle(sess.Title, sess.ID), Data: d})
}

// conversationContext fills the page around its messages: the links to
// the pages either side, lineage, children, handoff and usage.
func (srv *Server) conversationContext(ctx context.Context, d *conversationData, ms []store.Message) error {
	id := d.Session.ID
	base := sessionURL(id)
	d.First, d.Last = base+"?after=0", base
	d.Messages = make([]messageView, len(ms))
	for i, m := range ms {
		d.Messages[i] = viewMessage(m)
	}
	markCarried(d.Messages)
	var firstID, lastID int64
	if len(ms) > 0 {
		firstID, lastID = ms[0].ID, ms[len(ms)-1].ID
		older, err := srv.store.Messages(ctx, id, store.MessageQuery{BeforeID: firstID, Limit: 1, NewestFirst: true, IncludeRewound: true})
		if err != nil {
			return err
		}
		if len(older) > 0 {
			d.Older = base + "?before=" + strconv.FormatInt(firstID, 10)
		}
	}
	newer, err := srv.store.Messages(ctx, id, store.MessageQuery{AfterID: lastID, Limit: 1, IncludeRewound: true})
	if err != nil {
		return err
	}
	if len(newer) > 0 {
		d.Newer = base + "?after=" + strconv.FormatInt(lastID, 10)
	} else {
		d.Live = base + "/after?after=" + strconv.FormatInt(lastID, 10)
	}
	if d.Lineage, err = srv.store.Lineage(ctx, id); err != nil {
		return err
	}
	if d.Children, err = srv.store.ListSessions(ctx, store.SessionFilter{ParentID: id, Limit: 100}); err != nil {
		return err
	}
	if d.Handoff, err = srv.store.Handoff(ctx, id); err != nil {
		return err
	}
	if d.Usage, d.Models, err = srv.store.SessionUsage(ctx, id); err != nil {
		return err
	}
	d.Chart = modelChart("Tokens by model and task in this session", d.Models)
	return nil
}

// pageBefore is the page of messages before the id before (0: the newest
// page), oldest first.
func (srv *Server) pageBefore(ctx context.Context, id string, before int64) ([]store.Message, error) {
	ms, err := srv.store.Messages(ctx, id, store.MessageQuery{BeforeID: before, Limit: srv.opts.PageSize, NewestFirst: true, IncludeRewound: true})
	slices.Reverse(ms)
	return ms, err
}

// pageAround is the page with message at in its middle.
func (srv *Server) pageAround(ctx context.Context, id string, at int64) ([]store.Message, error) {
	if at < 1 {
		return srv.pageBefore(ctx, id, 0)
	}
	older, err := srv.store.Messages(ctx, id, store.MessageQuery{BeforeID: at, Limit: srv.opts.PageSize / 2, NewestFirst: true, IncludeRewound: true})
	if err != nil {
		return nil, err
	}
	slices.Reverse(older)
	rest, err := srv.store.Messages(ctx, id, store.MessageQuery{AfterID: at - 1, Limit: srv.opts.PageSize - len(older), IncludeRewound: true})
	return append(older, rest...), err
}

// handleAfter is the live refresh: the messages after ?after=ID (at most
// a page), as list items for the open page to append.
func (srv *Server) handleAfter(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	after, err := idParam(r.URL.Query().Get("after"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ms, err := srv.store.Messages(r.Context(), id, store.MessageQuery{AfterID: after, Limit: srv.opts.PageSize, IncludeRewound: true})
	if err != nil {
		srv.fail(w, r, err)
		return
	}
	vs := make([]messageView, len(ms))
	for i, m := range ms {
		vs[i] = viewMessage(m)
	}
	srv.render(w, r, http.StatusOK, "after", page{Data: vs})
}

// idParam reads a message id from a query parameter.
func idParam(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a message id: %w", s, errBadParam)
	}
	return n, nil
}

// sessionTitle is what a session is called on a page: its title, else
// its id.
func sessionTitle(title, id string) string {
	if title != "" {
		return title
	}
	return id
}
