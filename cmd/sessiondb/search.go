package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/sessiondb/sessiondb/db"
)

// searchUsage is the search command's line in the usage text.
const searchUsage = "search QUERY [--source S] [--exclude-source S]... [--role R]... [--session ID] [--sort relevance|newest|oldest] [--limit N] [--offset N] [--all] [--context N] [--marks]"

// roleFlags collects repeated --role flags.
type roleFlags []db.Role

func (r *roleFlags) String() string { return fmt.Sprint([]db.Role(*r)) }

func (r *roleFlags) Set(v string) error {
	*r = append(*r, db.Role(v))
	return nil
}

// sourceFlags collects a repeated --exclude-source.
type sourceFlags []string

func (f *sourceFlags) String() string { return fmt.Sprint([]string(*f)) }

func (f *sourceFlags) Set(v string) error {
	*f = append(*f, v)
	return nil
}

var sortNames = map[string]db.SearchSort{
	"relevance": db.SortRelevance, "newest": db.SortNewest, "oldest": db.SortOldest,
}

func runSearch(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	var o db.SearchOptions
	var roles roleFlags
	fs.StringVar(&o.Source, "source", "", "only sessions from this source")
	var excluded sourceFlags
	fs.Var(&excluded, "exclude-source", "leave out sessions from this `source`; repeat for several")
	fs.Var(&roles, "role", "only this `role` (system, user, assistant, tool, note); repeat for several")
	fs.StringVar(&o.SessionID, "session", "", "only this session `ID`")
	sortName := fs.String("sort", "relevance", "relevance, newest or oldest")
	fs.IntVar(&o.Limit, "limit", db.DefaultSearchLimit, "at most `N` hits (max 200)")
	fs.IntVar(&o.Offset, "offset", 0, "skip `N` hits")
	fs.IntVar(&o.Context, "context", 0, "show `N` neighbouring messages before and after each hit (max 5)")
	all := fs.Bool("all", false, "every hit from --offset on, fetched in pages (--limit is ignored)")
	marks := fs.Bool("marks", false, "put matches between >>> and <<< (the default without colour: on a terminal with NO_COLOR set)")
	pos, err := e.parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	o.ExcludeSources = excluded
	sort, ok := sortNames[*sortName]
	if !ok {
		return usagef("search: --sort %q: want relevance, newest or oldest", *sortName)
	}
	o.Sort, o.Roles = sort, roles
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	hl := e.highlighter(*marks)
	if *all {
		o.Limit = db.MaxSearchLimit
		out := &jsonStream{w: e.stdout}
		err := streamPages(o.Limit, func(prev []db.SearchHit) ([]db.SearchHit, error) {
			o.Offset += len(prev)
			return s.Search(ctx, pos[0], o)
		}, func(page []db.SearchHit, first bool) error {
			if e.json {
				for _, h := range page {
					out.add(toSearchHitJSON(h))
				}
				return out.err
			}
			return e.fitted(func(w io.Writer) error { return printSearchHits(w, page, first, hl) })
		})
		if err != nil || !e.json {
			return err
		}
		return out.close()
	}
	o.Limit = min(cmp.Or(o.Limit, db.DefaultSearchLimit), db.MaxSearchLimit)
	hits, err := s.Search(ctx, pos[0], o)
	if err != nil {
		return err
	}
	if e.json {
		err = writeJSON(e.stdout, mapAll(hits, toSearchHitJSON))
	} else {
		err = e.fitted(func(w io.Writer) error { return printSearchHits(w, hits, true, hl) })
	}
	if err != nil || len(hits) < o.Limit {
		return err
	}
	next := o
	next.Offset, next.Limit, next.Context = o.Offset+len(hits), 1, 0
	if probe, err := s.Search(ctx, pos[0], next); err != nil || len(probe) == 0 {
		return err
	}
	return e.printMore("hits", cursorOffset(next.Offset))
}

// searchHitJSON is a hit in the CLI's JSON: snake_case, RFC 3339 times.
type searchHitJSON struct {
	MessageID        int64         `json:"message_id"`
	SessionID        string        `json:"session_id"`
	Role             string        `json:"role"`
	ToolName         string        `json:"tool_name,omitempty"`
	Snippet          string        `json:"snippet"`
	Marks            [][2]int      `json:"marks,omitempty"` // byte ranges of snippet that matched
	CreatedAt        string        `json:"created_at"`
	Source           string        `json:"source"`
	Model            string        `json:"model,omitempty"`
	SessionStartedAt string        `json:"session_started_at"`
	Before           []contextJSON `json:"before,omitempty"`
	After            []contextJSON `json:"after,omitempty"`
}

type contextJSON struct {
	ID      int64  `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

func toContextJSON(c db.ContextMessage) contextJSON {
	return contextJSON{ID: c.ID, Role: string(c.Role), Content: c.Content}
}

func toSearchHitJSON(h db.SearchHit) searchHitJSON {
	out := searchHitJSON{
		MessageID: h.MessageID, SessionID: h.SessionID, Role: string(h.Role), ToolName: h.ToolName,
		Snippet: h.Snippet, CreatedAt: stamp(h.CreatedAt), Source: h.Source, Model: h.Model,
		SessionStartedAt: stamp(h.SessionStartedAt),
	}
	for _, m := range h.Marks {
		out.Marks = append(out.Marks, [2]int{m.Start, m.End})
	}
	if len(h.Before) > 0 {
		out.Before = mapAll(h.Before, toContextJSON)
	}
	if len(h.After) > 0 {
		out.After = mapAll(h.After, toContextJSON)
	}
	return out
}

// printSearchHits prints one row per hit (session, role, time, snippet),
// the neighbours, when asked for, indented under it; the header only when
// asked (the first page). Every stored text goes through oneLine: a
// message must not be able to drive the terminal.
func printSearchHits(w io.Writer, hits []db.SearchHit, header bool, hl highlighter) error {
	if len(hits) == 0 {
		if !header {
			return nil
		}
		_, err := fmt.Fprintln(w, "no matches")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if header {
		fmt.Fprintln(tw, "SESSION\tROLE\tTIME\tSNIPPET")
	}
	for _, h := range hits {
		role := string(h.Role)
		if h.ToolName != "" {
			role += " (" + h.ToolName + ")"
		}
		for _, c := range h.Before {
			fmt.Fprintf(tw, "\t\t\t  %s: %s\n", oneLine(string(c.Role)), oneLine(c.Content))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", oneLine(h.SessionID), oneLine(role), h.CreatedAt.Local().Format("2006-01-02 15:04"), hl.snippet(h.Snippet, h.Marks))
		for _, c := range h.After {
			fmt.Fprintf(tw, "\t\t\t  %s: %s\n", oneLine(string(c.Role)), oneLine(c.Content))
		}
	}
	return tw.Flush()
}
