package store

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/internal/searchtext"
	"github.com/sessiondb/sessiondb/store/driver"
)

// Search limits (Hermes's numbers).
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 200
	// MaxSearchContext is the most neighbours returned on each side of a hit.
	MaxSearchContext = 5
	// contextChars cuts each neighbour's content.
	contextChars = 200
)

// SearchSort orders search results.
type SearchSort = driver.SearchSort

const (
	// SortRelevance: best match first (bm25 over words; over substrings
	// see [Store.Search]). The default. Messages not
	// yet indexed (the last fraction of a second of appends, which the
	// background indexer has not reached) have no score: they come first,
	// newest first, then the indexed ones ranked. Ranking is bounded to a
	// window: the newest 2000 matches the search returns
	// (after the filters; rewound rows and hidden sessions never count),
	// best first, ties newest first. Hits past the window follow it, newest
	// first. The order is fixed, so paging with Offset visits every hit
	// exactly once: offsets below 2000 page through the ranked window,
	// offsets from 2000 on are the same hits as SortNewest at that offset.
	// One exception: a match the indexer reaches between two pages moves
	// from the unranked head into the window, so those two pages may
	// repeat or skip it (SortNewest and SortOldest do not move; IndexNow
	// first makes relevance pages exact).
	// On a word found in thousands of messages, the first pages are the
	// best of recent conversation. Without the index (see [Store.Search])
	// there is no ranking and results come newest first.
	//
	// What relevance promises at scale: a search's cost is bounded by the
	// window and the page, not by how many messages match (a word in one
	// message in ten of a million is ranked as fast as one in a thousand;
	// on PostgreSQL one exception, a word rare among the newest messages
	// and common long before them, whose older matches are read once).
	// A filter that admits few of the matches is read until the window
	// fills: a session, or on SQLite a source of at most 100 sessions,
	// only within its span of message ids; a rare role, or a source of
	// many sessions spread over time, among every match (on SQLite ~1.3 µs
	// each: a word in 150,000 messages, 0.2 s).
	// Within the window the score is bm25 on SQLite; a term's weight
	// there (its inverse document frequency) is exact for a term found
	// fewer than 2000 times and, for a commoner one, estimated from how
	// densely its newest 2000 matches lie among the newest messages; a
	// single term needs no weight. PostgreSQL's score is ts_rank, which
	// weighs no term by its frequency. The order never depends on matches
	// outside the window.
	SortRelevance = driver.SortRelevance
	// SortNewest: the most recently appended message first.
	SortNewest = driver.SortNewest
	// SortOldest: the first appended message first.
	SortOldest = driver.SortOldest
)

// maxExcludedSources bounds SearchOptions.ExcludeSources: a deny list
// names a few sources, never a table's worth.
const maxExcludedSources = 100

// SearchOptions filters, orders and pages [Store.Search]. The zero value
// searches every session, best match first, 20 hits, no context.
//
// Every sort is a fixed order over the matching messages (see SearchSort),
// so successive pages (Offset += Limit) neither repeat nor skip a hit while
// the store does not change (for SortRelevance, while the indexer does not
// reach a match either: see there); a page is read from one snapshot.
type SearchOptions struct {
	Source string // only sessions with this source
	// ExcludeSources leaves out the sessions of these sources (a search
	// tool hiding "cron" and "subagent" runs); Limit and Offset count
	// only what is left.
	ExcludeSources []string
	Roles          []Role // only these roles (empty: any)
	SessionID      string // only this session
	Sort           SearchSort
	Limit          int // default 20, at most 200 (larger values are cut to 200)
	Offset         int
	// Context asks for up to this many neighbouring messages (active or
	// compacted, in the hit's session) before and after each hit, each
	// cut to 200 characters. 0 to 5; larger values are cut to 5.
	Context int
}

// SearchHit is one message that matched.
type SearchHit struct {
	MessageID int64
	SessionID string
	Role      Role
	ToolName  string
	// Snippet is about 120 characters of the message around its first
	// match (starting some 40 before it), every match in it between >>>
	// and <<<, whitespace collapsed, "..." where it was cut. When only
	// the tool name matched, it is the tool name, marked; when only the
	// tool calls did, it is cut from them (a call's name, then its
	// arguments) in the same way.
	Snippet string
	// Marks are the matched runs of Snippet (the text between each >>>
	// and its <<<), as byte offsets. The text itself may hold ">>>": a
	// caller that shows matches its own way (bold on a terminal) reads
	// Marks, never the markers, and cannot be fooled by stored text.
	Marks            []Mark
	CreatedAt        time.Time
	Source           string // the session's
	Model            string // the session's
	SessionStartedAt time.Time
	// Before and After are the hit's neighbours, oldest first (empty
	// unless SearchOptions.Context asked for them).
	Before, After []ContextMessage
}

// Mark is a matched run of a snippet: Snippet[Start:End].
type Mark = searchtext.Mark

// ContextMessage is a neighbour of a hit, its content cut to 200
// characters.
type ContextMessage struct {
	ID      int64
	Role    Role
	Content string
}

// Search finds messages containing every term of query, in all sessions
// or as opts narrows. Rewound messages and hidden sessions are never
// returned; compacted messages are.
//
// Any text is a valid query. It is sanitised, never parsed as FTS5
// syntax: AND, OR, NOT, NEAR, *, ^, parentheses and column filters are
// searched as text or dropped, a balanced "quoted phrase" is kept, an
// unbalanced quote is dropped, and the query is cut to 2048 bytes. A
// query with nothing to search for (empty, only punctuation) returns no
// hits and no error. Invalid UTF-8 is refused with ErrInvalidInput, as
// are a negative limit, offset or context, an unknown role and an
// unknown sort.
//
// A message's searchable text is its content, its tool name and its tool
// calls: each call's function name and its arguments as the model wrote
// them (a JSON escape in the arguments, \n or \u00e9, is searched as
// written; call ids are not searched). Words are matched whole by the word
// index, in any of them, case and diacritics ignored; a dotted or
// hyphenated term (foo.bar, gpt-4o) or a phrase matches its words side by
// side, within one of them. A query in a script written without spaces
// (Chinese, Japanese, Korean, Thai...), or one the word index does not
// match, is searched as substrings of the content and of the tool calls
// through the trigram index; terms shorter than three characters
// are then checked by a substring test, and when no term is three
// characters long the messages are scanned. Relevance is bm25 over words;
// over substrings the SQLite engine ranks by how often the terms occur
// against the message's length (bm25's term-frequency part) and the
// PostgreSQL engine newest first (see SortRelevance for the bound on
// what is ranked).
//
// Search never fails because of the full-text index: when it is marked
// stale, or a query through it fails for any reason other than
// cancellation or Close (a damaged or unreadable index), Search scans the
// messages table instead (slower, substring matching with ASCII-only case
// folding, no ranking) and logs one warning.
//
// The hits, their snippets and their context are read in one snapshot: a
// concurrent write or delete cannot leave a hit without its text.
func (s *Store) Search(ctx context.Context, query string, opts SearchOptions) ([]SearchHit, error) {
	return s.search(ctx, query, opts)
}

// searchPlan is a validated search.
type searchPlan struct {
	terms searchtext.Terms
	opts  SearchOptions
}

func (o *SearchOptions) check() (searchPlan, error) {
	var p searchPlan
	switch {
	case o.Limit < 0 || o.Offset < 0 || o.Context < 0:
		return p, invalid("negative limit, offset or context")
	case o.Sort < SortRelevance || o.Sort > SortOldest:
		return p, invalid("unknown sort %d (want relevance, newest or oldest)", o.Sort)
	}
	if o.Limit == 0 {
		o.Limit = DefaultSearchLimit
	}
	o.Limit = min(o.Limit, MaxSearchLimit)
	o.Context = min(o.Context, MaxSearchContext)
	if o.SessionID != "" {
		if err := rules.CheckID("session id", o.SessionID); err != nil {
			return p, err
		}
	}
	if err := rules.CheckLabel("source", o.Source); err != nil {
		return p, err
	}
	if len(o.ExcludeSources) > maxExcludedSources {
		return p, invalid("%d excluded sources, at most %d", len(o.ExcludeSources), maxExcludedSources)
	}
	for _, src := range o.ExcludeSources {
		if err := rules.CheckLabel("excluded source", src); err != nil {
			return p, err
		}
	}
	if len(o.Roles) > 0 {
		for _, r := range o.Roles {
			if !r.Valid() {
				return p, invalid("role %q is not one of system, user, assistant, tool, note", r)
			}
		}
	}
	p.opts = *o
	return p, nil
}

// search is Search.
func (s *Store) search(ctx context.Context, query string, opts SearchOptions) ([]SearchHit, error) {
	const op = "search"
	p, err := opts.check()
	if err != nil {
		return nil, opErr(op, opts.SessionID, err)
	}
	if !utf8.ValidString(query) {
		return nil, opErr(op, opts.SessionID, invalid("query is not valid UTF-8"))
	}
	if p.terms = searchtext.Sanitize(query); len(p.terms) == 0 {
		return nil, nil
	}
	if s.closed.Load() {
		return nil, opErr(op, opts.SessionID, ErrClosed)
	}
	req := driver.SearchRequest{Terms: p.terms, Source: p.opts.Source, SessionID: p.opts.SessionID,
		Sort: p.opts.Sort, Limit: p.opts.Limit, Offset: p.opts.Offset, ExcludeSources: p.opts.ExcludeSources}
	for _, r := range p.opts.Roles {
		req.Roles = append(req.Roles, string(r))
	}
	var hits []SearchHit
	err = s.drv.Search(ctx, req, func(ctx context.Context, q driver.Executor, found []driver.SearchHit) error {
		hits = make([]SearchHit, len(found))
		for i, h := range found {
			hits[i] = SearchHit{MessageID: h.MessageID, SessionID: h.SessionID, Role: Role(h.Role),
				ToolName: h.ToolName, Snippet: h.Snippet, Marks: h.Marks, CreatedAt: fromMillis(h.CreatedAt),
				Source: h.Source, Model: h.Model, SessionStartedAt: fromMillis(h.SessionStartedAt)}
		}
		return p.addContext(ctx, q, hits)
	})
	if err != nil {
		return nil, s.opErr(op, opts.SessionID, err)
	}
	return hits, nil
}

// addContext fills each hit's neighbours when asked for.
func (p *searchPlan) addContext(ctx context.Context, q driver.Executor, hits []SearchHit) error {
	n := int64(p.opts.Context)
	if n == 0 {
		return nil
	}
	for i := range hits {
		h := &hits[i]
		before, err := q.MessageContextBefore(ctx, driver.MessageContextBeforeParams{
			SessionID: h.SessionID, ID: h.MessageID, RowLimit: n, MaxChars: contextChars})
		if err != nil {
			return err
		}
		after, err := q.MessageContextAfter(ctx, driver.MessageContextAfterParams{
			SessionID: h.SessionID, ID: h.MessageID, RowLimit: n, MaxChars: contextChars})
		if err != nil {
			return err
		}
		h.Before = make([]ContextMessage, len(before))
		for k, r := range before { // nearest first: reverse to oldest first
			h.Before[len(before)-1-k] = ContextMessage{ID: r.ID, Role: Role(r.Role), Content: r.Content}
		}
		h.After = make([]ContextMessage, len(after))
		for k, r := range after {
			h.After[k] = ContextMessage{ID: r.ID, Role: Role(r.Role), Content: r.Content}
		}
	}
	return nil
}
