package db

import (
	"context"
	"errors"
	"math"

	"github.com/ncruces/go-sqlite3"
	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/internal/searchtext"
	"github.com/sessiondb/sessiondb/store/driver"
)

// searchRoute says which way a search was answered (for tests and logs).
type searchRoute int

const (
	routeNone    searchRoute = iota // the query had nothing to search for
	routeWords                      // the unicode61 word index
	routeTrigram                    // the trigram index
	routeScan                       // a scan of the messages table
)

// routeSlot is the context key under which a caller (the tests) asks
// which route a search took: the value is a *searchRoute to fill.
type routeSlot struct{}

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

// searchPlan is a search as the SQLite engine runs it.
type searchPlan struct {
	terms   searchtext.Terms
	opts    driver.SearchRequest
	source  *string
	session *string
	roles   *string // JSON array
	exclude *string // JSON array of sources
	// The queued rows each index still holds (JSON arrays of ids, set
	// from the tail): the page queries leave them out (requeued).
	requeuedWords, requeuedTrigram string
	// lo and hi bound the ids the index queries read (span).
	lo, hi int64
}

// spanMaxSessions is the most sessions a source may have for a search by
// that source to find their span of ids first (SearchSourceSpan: two
// seeks a session). A variable only so that tests can shrink it.
var spanMaxSessions int64 = 100

// span sets the ids the search's matches can lie between: a session's
// first and last message, or those of a source's sessions when it has
// few, else every id. The index queries read only that span, so a search
// in one conversation, or in a source of a few sessions (or none), costs
// its own matches, not every match of its words in the store.
func (p *searchPlan) span(ctx context.Context, q gen.DBTX) error {
	p.lo, p.hi = 0, math.MaxInt64
	switch {
	case p.session != nil:
		r, err := queries.SearchSessionSpan(ctx, q, *p.session)
		p.lo, p.hi = r.LoID, r.HiID
		return err
	case p.source != nil:
		r, err := queries.SearchSourceSpan(ctx, q, gen.SearchSourceSpanParams{Source: *p.source, MaxSessions: spanMaxSessions})
		p.lo, p.hi = r.LoID, r.HiID
		return err
	}
	return nil
}

// Search answers from the full-text indexes (words, then trigrams), each
// covering the rows still queued for indexing, or — when the index is
// marked stale or fails for any reason but the search's own end — by
// scanning the messages table, with one warning. Hits and withHits share
// one snapshot, except after a scan, which reads in snapshots of its own
// (so withHits gets a fresh one).
func (s sqliteDriver) Search(ctx context.Context, req driver.SearchRequest, withHits func(context.Context, driver.Executor, []driver.SearchHit) error) error {
	p := &searchPlan{terms: req.Terms, opts: req, source: rules.Ptr(req.Source), session: rules.Ptr(req.SessionID)}
	if len(req.Roles) > 0 {
		p.roles = rules.Ptr(searchtext.JSONStrings(req.Roles))
	}
	if len(req.ExcludeSources) > 0 {
		p.exclude = rules.Ptr(searchtext.JSONStrings(req.ExcludeSources))
	}
	var hits []driver.SearchHit
	route := routeNone
	err := s.snapshotTx(ctx, func(q gen.DBTX) error {
		hits, route = nil, routeNone
		var reason string
		var cause error
		stale, err := ftsMarkedStale(ctx, q)
		switch {
		case err != nil:
			return err
		case stale:
			reason = "the full-text index is marked stale (it is rebuilt at the next open)"
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
		return withHits(ctx, sqliteExecutor{executor{q}}, hits)
	})
	if err == nil && route == routeScan {
		if hits, err = s.scanSearch(ctx, p); err == nil {
			err = s.snapshotTx(ctx, func(q gen.DBTX) error { return withHits(ctx, sqliteExecutor{executor{q}}, hits) })
		}
	}
	if slot, ok := ctx.Value(routeSlot{}).(*searchRoute); ok {
		*slot = route
	}
	return err
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
func (s *engine) scanInstead(ctx context.Context, err error) bool {
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
func (p *searchPlan) indexed(ctx context.Context, q gen.DBTX) ([]driver.SearchHit, searchRoute, error) {
	if err := p.span(ctx, q); err != nil {
		return nil, routeNone, err
	}
	queued, err := p.loadTail(ctx, q)
	if err != nil {
		return nil, routeNone, err
	}
	p.requeuedWords, p.requeuedTrigram = requeued(queued, true), requeued(queued, false)
	if match := p.terms.WordMatch(); match != "" {
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
	if match, long, short := p.terms.TrigramMatch(); match != "" {
		hits, err := p.trigram(ctx, q, trigramQuery{match: match, long: long, short: short}, p.page(p.opts.Limit, p.opts.Offset), p.trigramTail(queued))
		return hits, routeTrigram, err
	}
	return nil, routeScan, nil
}
