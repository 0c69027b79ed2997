package db

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/db/gen"
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
type SearchSort int

const (
	// SortRelevance: best match first (bm25). The default. Messages not
	// yet indexed (the last fraction of a second of appends, which the
	// background indexer has not reached) have no score: they come first,
	// newest first, then the indexed ones ranked. Ranking is bounded to a
	// window: the newest 2000 matches the search returns
	// (after the filters; rewound rows and hidden sessions never count),
	// best first, ties newest first. Hits past the window follow it, newest
	// first. The order is fixed, so paging with Offset visits every hit
	// exactly once: offsets below 2000 page through the ranked window,
	// offsets from 2000 on are the same hits as SortNewest at that offset.
	// On a word found in thousands of messages, the first pages are the
	// best of recent conversation. Without the index (see [Store.Search])
	// there is no ranking and results come newest first.
	SortRelevance SearchSort = iota
	// SortNewest: the most recently appended message first.
	SortNewest
	// SortOldest: the first appended message first.
	SortOldest
)

func (s SearchSort) String() string {
	switch s {
	case SortRelevance:
		return "relevance"
	case SortNewest:
		return "newest"
	case SortOldest:
		return "oldest"
	}
	return "SearchSort(" + strconv.Itoa(int(s)) + ")"
}

// SearchOptions filters, orders and pages [Store.Search]. The zero value
// searches every session, best match first, 20 hits, no context.
//
// Every sort is a fixed order over the matching messages (see SearchSort),
// so successive pages (Offset += Limit) neither repeat nor skip a hit while
// the store does not change; a page is read from one snapshot.
type SearchOptions struct {
	Source    string // only sessions with this source
	Roles     []Role // only these roles (empty: any)
	SessionID string // only this session
	Sort      SearchSort
	Limit     int // default 20, at most 200 (larger values are cut to 200)
	Offset    int
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
	// the tool name matched, it is the tool name, marked.
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
type Mark struct{ Start, End int }

// ContextMessage is a neighbour of a hit, its content cut to 200
// characters.
type ContextMessage struct {
	ID      int64
	Role    Role
	Content string
}

// searchRoute says which way a search was answered (for tests and logs).
type searchRoute int

const (
	routeNone    searchRoute = iota // the query had nothing to search for
	routeWords                      // the unicode61 word index
	routeTrigram                    // the trigram index
	routeScan                       // a scan of the messages table
)

// searchRow is the shape every page query returns (the generated row
// types are identical and convert to it).
type searchRow = struct {
	ID        int64
	SessionID string
	Role      string
	ToolName  *string
	CreatedAt int64
	Source    string
	Model     *string
	StartedAt int64
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
// Words are matched whole by the word index, in the content and the tool
// name, case and diacritics ignored; a dotted or hyphenated term
// (foo.bar, gpt-4o) or a phrase matches its words side by side. A query
// in a script written without spaces (Chinese, Japanese, Korean, Thai...),
// or one the word index does not match, is searched as substrings of the
// content through the trigram index; terms shorter than three characters
// are then checked by a substring test, and when no term is three
// characters long the messages are scanned. Relevance is bm25 (see
// SortRelevance for the bound on what it ranks).
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
	hits, _, err := s.search(ctx, query, opts)
	return hits, err
}

// searchPlan is a validated search.
type searchPlan struct {
	terms   searchTerms
	opts    SearchOptions
	source  *string
	session *string
	roles   *string // JSON array
}

func (o *SearchOptions) check() (searchPlan, error) {
	p := searchPlan{source: ptr(o.Source), session: ptr(o.SessionID)}
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
		if err := checkID("session id", o.SessionID); err != nil {
			return p, err
		}
	}
	if err := checkLabel("source", o.Source); err != nil {
		return p, err
	}
	if len(o.Roles) > 0 {
		names := make([]string, len(o.Roles))
		for i, r := range o.Roles {
			if !r.Valid() {
				return p, invalid("role %q is not one of system, user, assistant, tool", r)
			}
			names[i] = string(r)
		}
		p.roles = ptr(jsonStrings(names))
	}
	p.opts = *o
	return p, nil
}

// search is Search, also saying which way it went.
func (s *Store) search(ctx context.Context, query string, opts SearchOptions) (hits []SearchHit, route searchRoute, err error) {
	const op = "search"
	p, err := opts.check()
	if err != nil {
		return nil, routeNone, opErr(op, opts.SessionID, err)
	}
	if !utf8.ValidString(query) {
		return nil, routeNone, opErr(op, opts.SessionID, invalid("query is not valid UTF-8"))
	}
	if p.terms = sanitizeQuery(query); len(p.terms) == 0 {
		return nil, routeNone, nil
	}
	err = s.snapshot(ctx, op, opts.SessionID, func(q gen.DBTX) error {
		hits, route = nil, routeNone
		var reason string
		var cause error
		_, err := queries.MetaGet(ctx, q, metaFTSStale)
		switch {
		case err == nil:
			reason = "the full-text index is marked stale (it is rebuilt at the next open)"
		case !errors.Is(err, sql.ErrNoRows):
			return err
		default:
			hits, route, err = p.indexed(ctx, q)
			if s.scanInstead(ctx, err) {
				reason, cause = "the full-text index is damaged or unreadable", err
			} else if err != nil {
				return err
			}
		}
		if reason != "" {
			attrs := []any{"path", s.path}
			if cause != nil {
				attrs = append(attrs, "err", cause)
			}
			s.opts.Logger.Warn("sessiondb: search is scanning the messages table: "+reason, attrs...)
			route = routeScan
		}
		if route == routeScan {
			return nil // the scan reads in snapshots of its own (scanSearch)
		}
		return p.addContext(ctx, q, hits)
	})
	if err == nil && route == routeScan {
		if hits, err = s.scanSearch(ctx, op, &p); err == nil {
			err = s.snapshot(ctx, op, opts.SessionID, func(q gen.DBTX) error { return p.addContext(ctx, q, hits) })
		}
	}
	if err != nil {
		return nil, routeNone, err
	}
	return hits, route, nil
}

// scanInstead reports an error from the full-text route that the scan
// should answer instead: an error of the driver (damage shows as CORRUPT,
// CORRUPT_VTAB, or a plain ERROR such as "invalid fts5 file format"; the
// message text is not a contract, so none is matched), except where a scan
// would only fail again, later: the search's own end (its context done,
// an interrupt, the store closed) or another process's lock. Anything that
// is not the driver's (a context error, ErrClosed, sql.ErrConnDone) is
// returned as it is. Writes are stricter (db/tx.go): they fail open on
// index damage only.
func (s *Store) scanInstead(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || s.closed.Load() || errors.Is(err, sqlite3.INTERRUPT) || isLockError(err) {
		return false
	}
	var code sqlite3.ErrorCode // *sqlite3.Error and ExtendedErrorCode convert too
	return errors.As(err, &code)
}

// indexed answers from the full-text indexes: the word index first,
// unless the query is in an unsegmented script or has nothing it can
// match; then, when it found nothing, the trigram index. When no term is
// long enough for a trigram it returns routeScan with no hits: the caller
// runs the scan (scanSearch), outside this snapshot.
//
// Each index route also covers the rows still queued for indexing, matched
// by that index's rules (search_tail.go); the scan reads the table itself.
func (p *searchPlan) indexed(ctx context.Context, q gen.DBTX) ([]SearchHit, searchRoute, error) {
	queued, err := p.loadTail(ctx, q)
	if err != nil {
		return nil, routeNone, err
	}
	if match := p.terms.wordMatch(); match != "" {
		tail := p.wordTail(queued)
		hits, err := p.words(ctx, q, match, p.page(p.opts.Limit, p.opts.Offset), tail)
		if err != nil || len(hits) > 0 {
			return hits, routeWords, err
		}
		if p.opts.Offset > 0 { // past the last page, or no match at all?
			if len(tail) > 0 {
				return nil, routeWords, nil
			}
			if first, err := p.words(ctx, q, match, p.page(1, 0), nil); err != nil || len(first) > 0 {
				return nil, routeWords, err
			}
		}
	}
	if match, short := p.terms.trigramMatch(); match != "" {
		hits, err := p.trigram(ctx, q, match, short, p.page(p.opts.Limit, p.opts.Offset), p.trigramTail(queued))
		return hits, routeTrigram, err
	}
	return nil, routeScan, nil
}

// addContext fills each hit's neighbours when asked for.
func (p *searchPlan) addContext(ctx context.Context, q gen.DBTX, hits []SearchHit) error {
	n := int64(p.opts.Context)
	if n == 0 {
		return nil
	}
	for i := range hits {
		h := &hits[i]
		before, err := queries.MessageContextBefore(ctx, q, gen.MessageContextBeforeParams{
			SessionID: h.SessionID, ID: h.MessageID, RowLimit: n, MaxChars: contextChars})
		if err != nil {
			return err
		}
		after, err := queries.MessageContextAfter(ctx, q, gen.MessageContextAfterParams{
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
