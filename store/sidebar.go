package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"iter"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// previewLen is how many characters of the first user message a session
// list shows.
const previewLen = 60

// RecentQuery selects sessions for a picker or a sidebar: newest activity
// first, where a session was last active at its ConversationActiveAt: the
// newest message or heartbeat (TouchActivity) of the session and of its
// compression ancestors, never before it started — so a conversation
// listed at its tip sorts by the newest activity anywhere in its chain
// (delegates have conversations of their own and move nothing). The zero
// value lists every visible session, 50 a page.
type RecentQuery struct {
	// UserID keeps one user's sessions ("" = every user's).
	UserID string
	// Sources keeps only these sources; ExcludeSources drops these (a
	// session picker may hide "cron" or "tool", say).
	Sources, ExcludeSources []string
	// Archived: nil = both, true = archived only, false = not archived.
	Archived *bool
	// PinnedFirst lists pinned sessions before the rest, each part newest
	// activity first.
	PinnedFirst bool
	// Cwd keeps sessions whose working directory is this directory or
	// below it ("/src/app" keeps "/src/app/web", not "/src/apple").
	Cwd string
	// StartedSince and ActiveSince keep sessions started, or last active,
	// at or after a time (zero = any).
	StartedSince, ActiveSince time.Time
	// Conversations shows each conversation once, as its compression
	// tip: the sessions a compression continued are one conversation to a
	// person, and the tip is where it goes on.
	Conversations bool
	// IncludeChildren lists delegate and tool sessions too; a sidebar
	// normally shows only the conversations people had. A delegate stays
	// out without its parent too (Session.DelegatedFrom).
	IncludeChildren bool
	// ByStart orders the list by when each conversation began, newest
	// first (a compression continuation at its root's start:
	// Session.RootStartedAt), instead of by last activity; pages are
	// keyset-paged on an index of their own (sessions_root_started), and
	// a cursor continues only a listing of the same order.
	ByStart bool
	// IncludeHidden lists hidden sessions too.
	IncludeHidden bool
	// Limit is the page size: default 50, at most 1000.
	Limit int
	// Cursor continues a listing from the RecentPage.Next of the page
	// before; "" starts at the newest.
	Cursor string
}

// SessionSummary is one row of a session list.
type SessionSummary struct {
	ID, Source, UserID, Model, Cwd string
	// Title is the session's title ("" when it has none).
	Title string
	// Preview is the first user message as one line, at most 60
	// characters ("…" ends a cut one).
	Preview      string
	StartedAt    time.Time
	LastActiveAt time.Time
	// EndedAt is zero for a live session.
	EndedAt      time.Time
	EndReason    string
	MessageCount int64
	Archived     bool
	AutoArchived bool // the idle sweep archived it (Session.AutoArchived)
	Pinned       bool
	Hidden       bool
	ParentID     string
	Kind         ChildKind
	// The compact projection's workspace fields (a session list shows
	// where each conversation ran; the system prompt never travels).
	GitBranch, GitRepoRoot string
	// RootStartedAt is when the conversation began (RecentQuery.ByStart).
	RootStartedAt time.Time
	// DelegatedFrom is set on a delegate, kept without its parent
	// (listed only with RecentQuery.IncludeChildren).
	DelegatedFrom string
}

// RecentPage is one page of a session list.
type RecentPage struct {
	Sessions []SessionSummary
	// Next continues the listing (RecentQuery.Cursor); "" when this page
	// is the last.
	Next string
}

// SessionCounts are the totals a session list's filters select.
type SessionCounts struct {
	Total    int64
	Archived int64
	BySource map[string]int64
	ByUser   map[string]int64 // "" counts sessions without a user
}

// RecentSessions returns one page of sessions, newest activity first.
// Pages are keyset-paged on an index: each costs the same however deep
// the listing, and a session that becomes active while a person pages
// moves to the top rather than shifting the pages below it.
func (s *Store) RecentSessions(ctx context.Context, q RecentQuery) (RecentPage, error) {
	const op = "list recent sessions"
	p, cur, err := q.params()
	if err != nil {
		return RecentPage{}, opErr(op, "", err)
	}
	var page RecentPage
	err = s.read(ctx, op, "", func(db driver.Executor) error {
		for len(page.Sessions) < int(p.RowLimit) && cur.phase < 2 {
			p.Pinned = nil
			if q.PinnedFirst {
				p.Pinned = flag(cur.phase == 0)
			}
			p.AfterAt, p.AfterID = nil, cur.afterID
			if cur.afterID != "" {
				p.AfterAt = &cur.afterAt
			}
			want := p.RowLimit - int64(len(page.Sessions))
			p.RowLimit = want + 1 // one more, to know whether this part goes on
			rows, err := recentRows(ctx, db, p, q.ByStart)
			p.RowLimit = int64(q.limit())
			if err != nil {
				return err
			}
			more := int64(len(rows)) > want
			if more {
				rows = rows[:want]
			}
			for _, r := range rows {
				page.Sessions = append(page.Sessions, summaryFromRow(r))
				cur.afterAt, cur.afterID = r.ActiveAt, r.ID
				if q.ByStart {
					cur.afterAt = r.RootStartedAt
				}
			}
			if more {
				page.Next = cur.encode()
				return nil
			}
			if !q.PinnedFirst {
				return nil
			}
			cur = recentCursor{phase: cur.phase + 1, byStart: cur.byStart}
			if cur.phase < 2 && len(page.Sessions) == int(p.RowLimit) {
				page.Next = cur.encode() // the pinned part ended with the page
			}
		}
		return nil
	})
	if err != nil {
		return RecentPage{}, err
	}
	return page, nil
}

// AllRecentSessions streams every session RecentSessions would list, page
// by page (constant memory; each page its own read, so a long listing
// never holds a snapshot open). q.Cursor and q.Limit set where it starts
// and how many it reads at a time.
func (s *Store) AllRecentSessions(ctx context.Context, q RecentQuery) iter.Seq2[SessionSummary, error] {
	return func(yield func(SessionSummary, error) bool) {
		for {
			page, err := s.RecentSessions(ctx, q)
			if err != nil {
				yield(SessionSummary{}, err)
				return
			}
			for _, sum := range page.Sessions {
				if !yield(sum, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			q.Cursor = page.Next
		}
	}
}

// CountSessions counts the sessions q selects (its paging ignored), in all
// and per source, user and archived flag, for the totals beside a list.
func (s *Store) CountSessions(ctx context.Context, q RecentQuery) (SessionCounts, error) {
	const op = "count sessions"
	q.Cursor = ""
	p, _, err := q.params()
	if err != nil {
		return SessionCounts{}, opErr(op, "", err)
	}
	c := SessionCounts{BySource: map[string]int64{}, ByUser: map[string]int64{}}
	err = s.read(ctx, op, "", func(db driver.Executor) error {
		rows, err := db.SessionRecentCounts(ctx, driver.SessionRecentCountsParams{
			UserID: p.UserID, Sources: p.Sources, ExcludeSources: p.ExcludeSources, Archived: p.Archived,
			IncludeHidden: p.IncludeHidden, Cwd: p.Cwd, StartedSince: p.StartedSince, ActiveSince: p.ActiveSince,
			IncludeChildren: p.IncludeChildren, TipsOnly: p.TipsOnly})
		for _, r := range rows {
			c.Total += r.Sessions
			c.BySource[r.Source] += r.Sessions
			c.ByUser[r.UserID] += r.Sessions
			if r.Archived != 0 {
				c.Archived += r.Sessions
			}
		}
		return err
	})
	return c, err
}

func (q RecentQuery) limit() int {
	switch {
	case q.Limit == 0:
		return 50
	case q.Limit > 1000:
		return 1000
	}
	return q.Limit
}

// params checks q and turns it into the query's parameters.
func (q RecentQuery) params() (driver.SessionRecentParams, recentCursor, error) {
	if q.Limit < 0 {
		return driver.SessionRecentParams{}, recentCursor{}, invalid("negative limit")
	}
	cur, err := decodeRecentCursor(q.Cursor)
	if err != nil {
		return driver.SessionRecentParams{}, recentCursor{}, err
	}
	if q.Cursor != "" && cur.byStart != q.ByStart {
		return driver.SessionRecentParams{}, recentCursor{}, invalid("session list cursor %q continues a listing of another order", q.Cursor)
	}
	cur.byStart = q.ByStart
	p := driver.SessionRecentParams{UserID: rules.Ptr(q.UserID), RowLimit: int64(q.limit()),
		IncludeHidden: bit(q.IncludeHidden), IncludeChildren: bit(q.IncludeChildren), TipsOnly: bit(q.Conversations)}
	for _, list := range []struct {
		dst  **string
		vals []string
	}{{&p.Sources, q.Sources}, {&p.ExcludeSources, q.ExcludeSources}} {
		if len(list.vals) > 0 {
			b, _ := json.Marshal(list.vals) // strings always marshal
			*list.dst = rules.Ptr(string(b))
		}
	}
	if q.Archived != nil {
		p.Archived = flag(*q.Archived)
	}
	p.Cwd = rules.Ptr(strings.TrimRight(q.Cwd, "/")) // nil for "/", which holds every directory
	for _, t := range []struct {
		dst **int64
		at  time.Time
	}{{&p.StartedSince, q.StartedSince}, {&p.ActiveSince, q.ActiveSince}} {
		if !t.at.IsZero() {
			ms := t.at.UnixMilli()
			*t.dst = &ms
		}
	}
	return p, cur, nil
}

func bit(on bool) int64 {
	if on {
		return 1
	}
	return 0
}

// recentCursor is where a listing goes on: after the row (afterAt,
// afterID) of phase 0 (pinned, in a pinned-first list, else everything)
// or 1 (the rest).
type recentCursor struct {
	phase   int
	afterAt int64 // the last row's activity, or its conversation's start (byStart)
	afterID string
	byStart bool
}

// encode makes the cursor an opaque token: callers must not build one. A
// by-start cursor's phase is written "s0" or "s1".
func (c recentCursor) encode() string {
	phase := strconv.Itoa(c.phase)
	if c.byStart {
		phase = "s" + phase
	}
	raw := phase + ":" + strconv.FormatInt(c.afterAt, 10) + ":" + c.afterID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeRecentCursor(s string) (recentCursor, error) {
	if s == "" {
		return recentCursor{}, nil
	}
	bad := invalid("session list cursor %q is not one a listing returned", s)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return recentCursor{}, bad
	}
	parts := strings.SplitN(string(raw), ":", 3)
	if len(parts) != 3 {
		return recentCursor{}, bad
	}
	phaseText, byStart := strings.CutPrefix(parts[0], "s")
	phase, err1 := strconv.Atoi(phaseText)
	at, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || phase < 0 || phase > 1 || !utf8.ValidString(parts[2]) {
		return recentCursor{}, bad
	}
	return recentCursor{phase: phase, afterAt: at, afterID: parts[2], byStart: byStart}, nil
}

// recentRows reads one page in the listing's order.
func recentRows(ctx context.Context, db driver.Executor, p driver.SessionRecentParams, byStart bool) ([]driver.SessionRecentRow, error) {
	if !byStart {
		return db.SessionRecent(ctx, p)
	}
	rows, err := db.SessionRecentByStart(ctx, driver.SessionRecentByStartParams(p))
	out := make([]driver.SessionRecentRow, len(rows))
	for i, r := range rows {
		out[i] = driver.SessionRecentRow(r)
	}
	return out, err
}

func summaryFromRow(r driver.SessionRecentRow) SessionSummary {
	sum := SessionSummary{
		ID: r.ID, Source: r.Source, UserID: rules.Str(r.UserID), Model: rules.Str(r.Model), Cwd: rules.Str(r.Cwd),
		Title: rules.Str(r.Title), Preview: preview(r.Preview), StartedAt: fromMillis(r.StartedAt),
		LastActiveAt: fromMillis(r.ActiveAt), EndReason: rules.Str(r.EndReason), MessageCount: r.MessageCount,
		Archived: r.Archived != 0, AutoArchived: r.AutoArchived != 0, Pinned: r.Pinned != 0, Hidden: r.Hidden != 0,
		ParentID: rules.Str(r.ParentSessionID), Kind: ChildKind(rules.Str(r.ParentKind)),
		GitBranch: rules.Str(r.GitBranch), GitRepoRoot: rules.Str(r.GitRepoRoot),
		RootStartedAt: fromMillis(r.RootStartedAt), DelegatedFrom: rules.Str(r.DelegatedFrom),
	}
	if r.EndedAt != nil {
		sum.EndedAt = fromMillis(*r.EndedAt)
	}
	return sum
}

// preview is a message's first characters as one line.
func preview(text string) string {
	line := rules.FoldLine(text)
	if utf8.RuneCountInString(line) <= previewLen {
		return line
	}
	return strings.TrimRight(string([]rune(line)[:previewLen-1]), " ") + "…"
}
