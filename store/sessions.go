package store

import (
	"context"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// Session is one conversation.
type Session struct {
	ID string
	// Source tags where the session came from ("cli", "gateway", ...).
	Source string
	// ParentID links lineage: a compression continuation, a branch or a
	// delegate names the session it came from. Empty for a root.
	ParentID string
	// Kind says what the session is to its parent ("" when unknown).
	Kind         ChildKind
	UserID       string
	Model        string
	ModelConfig  string // JSON text, as given
	SystemPrompt string
	Cwd          string
	Title        string
	TitleRank    TitleRank // who chose Title (SetTitle, SetAutoTitle)
	StartedAt    time.Time
	// EndedAt is zero while the session is live.
	EndedAt   time.Time
	EndReason string
	// MessageCount and ToolCallCount are kept in the same transaction as
	// the rows they count.
	MessageCount  int64
	ToolCallCount int64
	Archived      bool
	// AutoArchived: the idle sweep archived it (AutoArchiveSessions), not
	// a person; new activity takes such an archive back. Archived is set
	// too.
	AutoArchived bool
	Pinned       bool
	Hidden       bool
	// Unread: explicitly marked unread (MarkUnread) and not read since.
	Unread bool
	// RewindCount counts the rewinds done on this session.
	RewindCount int64
	// DisplayRevision counts the visible changes of this session's
	// transcript: one per append (a batch is one), compaction, rewind,
	// receipt or import, none for anything else. A conversation's
	// revision (DisplayPage.Revision) is made of its members'.
	DisplayRevision int64
	// LastActivityAt is the latest TouchActivity time (zero when never
	// touched), with the labels of the current activity.
	LastActivityAt      time.Time
	ActivityDescription string
	ActivityProvenance  string
	// Usage is the session's main-loop token and cost totals (RecordUsage).
	Usage Usage
	// GitBranch and GitRepoRoot describe the workspace beside Cwd
	// (SetWorkspace).
	GitBranch   string
	GitRepoRoot string
	// Billing is how the session's cost is computed.
	Billing Billing
	// Routing is where a chat platform's gateway finds the session.
	Routing Routing
	// CompressionRetryAfter is when a failed compression may be tried
	// again (zero: no cooldown), CompressionError why it failed
	// (CompressionFailed).
	CompressionRetryAfter time.Time
	CompressionError      string
	// CompressionFallbackStreak counts the compressions in a row that fell
	// back (CompressionFellBack); a compression that worked ends it.
	CompressionFallbackStreak int64
	// DelegatedFrom is the session a delegate was made for, kept when its
	// parent link goes (the parent was deleted, or was not in an import):
	// a delegate stays out of session lists without its parent too.
	DelegatedFrom string
	// ConversationActiveAt is when the conversation was last active up to
	// this session: the newest message or heartbeat of the session and of
	// its compression ancestors, never before its start. On a compression
	// tip it is the conversation's last activity; session lists sort by it.
	ConversationActiveAt time.Time
	// RootStartedAt is when the session's conversation began: on a
	// compression continuation its root's start, else StartedAt.
	// RecentQuery.ByStart lists conversations in this order.
	RootStartedAt time.Time
}

// Billing is the route a cost is computed under.
type Billing struct {
	Provider       string
	BaseURL        string
	Mode           string
	CostStatus     string
	CostSource     string
	PricingVersion string // sessions only
}

// Routing is a gateway session's address on its chat platform.
type Routing struct {
	SessionKey  string
	ChatID      string
	ChatType    string
	ThreadID    string
	DisplayName string
	OriginJSON  string // JSON text, as given
}

// ChildKind says what a child session is to its parent.
type ChildKind string

// The kinds of child session.
const (
	// ChildCompression continues its parent's conversation after a
	// compression; the parent ends with reason "compression".
	ChildCompression ChildKind = "compression"
	// ChildBranch starts a new conversation from a point in the parent's.
	ChildBranch ChildKind = "branch"
	// ChildDelegate is a sub-agent's session: deleted with its parent.
	ChildDelegate ChildKind = "delegate"
	// ChildReset follows a session the user reset.
	ChildReset ChildKind = "reset"
	// ChildTool is a session a tool ran.
	ChildTool ChildKind = "tool"
)

// Valid reports whether k is one of the kinds ("" is not).
func (k ChildKind) Valid() bool {
	switch k {
	case ChildCompression, ChildBranch, ChildDelegate, ChildReset, ChildTool:
		return true
	}
	return false
}

// Ended reports whether the session has been ended.
func (s Session) Ended() bool { return !s.EndedAt.IsZero() }

// NewSession describes a session to create. Only Source is needed; an
// empty ID gets a generated one.
type NewSession struct {
	ID       string
	Source   string // default "unknown"
	ParentID string
	// Kind says what the session is to ParentID; it needs a ParentID. A
	// compression continuation is made by PublishCompressionChild, not here.
	Kind         ChildKind
	UserID       string
	Model        string
	ModelConfig  string
	SystemPrompt string
	Cwd          string
	Title        string // a user's title (TitleUser): unique per user, rules as in SetTitle
}

func (n *NewSession) normalize() error {
	if n.ID == "" {
		n.ID = newSessionID()
	}
	if n.Source == "" {
		n.Source = "unknown"
	}
	if err := rules.CheckID("session id", n.ID); err != nil {
		return err
	}
	if n.ParentID != "" {
		if err := rules.CheckID("parent session id", n.ParentID); err != nil {
			return err
		}
		if n.ParentID == n.ID {
			return invalid("session %q cannot be its own parent", n.ID)
		}
	}
	if n.Kind != "" && (!n.Kind.Valid() || n.ParentID == "") {
		return invalid("child kind %q needs a parent and one of compression, branch, delegate, reset, tool", n.Kind)
	}
	var err error
	if n.Title, err = rules.SanitizeTitle(n.Title); err != nil {
		return err
	}
	if err := rules.CheckLabels([]rules.Field{
		{Name: "source", Value: n.Source},
		{Name: "user id", Value: n.UserID},
		{Name: "model", Value: n.Model},
		{Name: "title", Value: n.Title},
	}); err != nil {
		return err
	}
	if err := rules.CheckJSONObject("model config", n.ModelConfig); err != nil {
		return err
	}
	if err := rules.CheckTexts([]rules.Field{
		{Name: "system prompt", Value: n.SystemPrompt},
		{Name: "cwd", Value: n.Cwd},
	}); err != nil {
		return err
	}
	return nil
}

// CreateSession creates a session and returns it. It fails with ErrExists
// when the id is taken, with a *TitleInUseError (errors.Is ErrExists) when
// another session holds the title, and with ErrNotFound when ParentID
// names no session.
func (s *Store) CreateSession(ctx context.Context, n NewSession) (Session, error) {
	sess, created, err := s.ensureSession(ctx, "create session", n)
	if err == nil && !created {
		err = opErr("create session", sess.ID, ErrExists)
	}
	return sess, err
}

// EnsureSession returns the session with n.ID, creating it from n when it
// does not exist; created says which. On an existing session no field that
// is set is overwritten: only empty ones (user, model, model config, system
// prompt, cwd) are filled from n, and the "unknown" source placeholder is
// replaced. Parent, kind and title are never changed by it. Creating a
// session whose title another session holds fails with a *TitleInUseError,
// as in CreateSession.
func (s *Store) EnsureSession(ctx context.Context, n NewSession) (sess Session, created bool, err error) {
	return s.ensureSession(ctx, "ensure session", n)
}

func (s *Store) ensureSession(ctx context.Context, op string, n NewSession) (sess Session, created bool, err error) {
	if err := n.normalize(); err != nil {
		return Session{}, false, opErr(op, n.ID, err)
	}
	if n.Kind.Continues() {
		// A continuation must end its parent in the same transaction, or the
		// conversation would have two live tips.
		return Session{}, false, opErr(op, n.ID, invalid("a compression child is made by PublishCompressionChild"))
	}
	err = s.write(ctx, op, n.ID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		n := n // the parent's working directory fills an empty one (on every replay)
		if n.ParentID != "" {
			parent, err := tx.SessionGet(ctx, n.ParentID)
			if err != nil {
				return fmt.Errorf("parent session %q: %w", n.ParentID, err)
			}
			n.Cwd = orDefault(n.Cwd, rules.Str(parent.Cwd))
		}
		exists, err := tx.SessionExists(ctx, n.ID)
		if err != nil {
			return err
		}
		created = exists == 0
		if created {
			if err := titleFree(ctx, tx, n.UserID, n.Title); err != nil {
				return err
			}
			if _, err := tx.SessionInsert(ctx, insertSessionParams(n, now())); err != nil {
				return err
			}
		}
		if !created && op == "ensure session" {
			if err := tx.SessionFillUnset(ctx, driver.SessionFillUnsetParams{ID: n.ID, Source: n.Source,
				UserID: rules.Ptr(n.UserID), Model: rules.Ptr(n.Model), ModelConfigJson: rules.Ptr(n.ModelConfig),
				SystemPrompt: rules.Ptr(n.SystemPrompt), Cwd: rules.Ptr(n.Cwd)}); err != nil {
				return err
			}
		}
		row, err := tx.SessionGet(ctx, n.ID)
		sess = sessionFromRow(row)
		return err
	})
	return sess, created, err
}

// insertSessionParams maps a normalized NewSession to its row.
func insertSessionParams(n NewSession, startedAt int64) driver.SessionInsertParams {
	rank := int64(TitleDerived) // no title
	if n.Title != "" {
		rank = int64(TitleUser) // a title given at creation was chosen by someone
	}
	return driver.SessionInsertParams{
		ID: n.ID, Source: n.Source, ParentSessionID: rules.Ptr(n.ParentID), ParentKind: rules.Ptr(string(n.Kind)),
		UserID: rules.Ptr(n.UserID), Model: rules.Ptr(n.Model), ModelConfigJson: rules.Ptr(n.ModelConfig),
		SystemPrompt: rules.Ptr(n.SystemPrompt), Cwd: rules.Ptr(n.Cwd), Title: rules.Ptr(n.Title), TitleRank: rank,
		StartedAt: startedAt,
	}
}

// Session returns the session with id, or ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	var sess Session
	err := s.read(ctx, "get session", id, func(q driver.Executor) error {
		row, err := q.SessionGet(ctx, id)
		sess = sessionFromRow(row)
		return err
	})
	return sess, err
}

// EndSession ends a live session with reason. The first reason wins: on a
// session already ended it changes nothing and returns ended=false.
func (s *Store) EndSession(ctx context.Context, id, reason string) (ended bool, err error) {
	if reason == "" {
		return false, opErr("end session", id, invalid("empty end reason"))
	}
	if err := rules.CheckLabel("end reason", reason); err != nil {
		return false, opErr("end session", id, err)
	}
	err = s.write(ctx, "end session", id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		at := now()
		n, err := tx.SessionEnd(ctx, driver.SessionEndParams{ID: id, EndedAt: &at, EndReason: &reason})
		if err != nil {
			return err
		}
		ended = n == 1
		if !ended {
			return sessionMustExist(ctx, tx, id)
		}
		return nil
	})
	return ended, err
}

// SessionFilter selects sessions for ListSessions. The zero value lists
// every session, newest first, 50 at a time.
type SessionFilter struct {
	Source   string
	ParentID string
	// Ended: nil = any, true = ended only, false = live only.
	Ended  *bool
	Limit  int // default 50, at most 1000
	Offset int
}

// ListSessions returns sessions newest first.
func (s *Store) ListSessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	switch {
	case f.Limit < 0 || f.Offset < 0:
		return nil, opErr("list sessions", "", invalid("negative limit or offset"))
	case f.Limit == 0:
		f.Limit = 50
	case f.Limit > 1000:
		f.Limit = 1000
	}
	p := driver.SessionListParams{Source: rules.Ptr(f.Source), ParentSessionID: rules.Ptr(f.ParentID),
		RowLimit: int64(f.Limit), RowOffset: int64(f.Offset)}
	if f.Ended != nil {
		p.Ended = flag(*f.Ended)
	}
	var out []Session
	err := s.read(ctx, "list sessions", "", func(q driver.Executor) error {
		rows, err := q.SessionList(ctx, p)
		out = make([]Session, len(rows))
		for i, r := range rows {
			out[i] = sessionFromRow(r)
		}
		return err
	})
	return out, err
}

// sessionMustExist returns ErrNotFound when no session has id.
func sessionMustExist(ctx context.Context, q driver.Executor, id string) error {
	n, err := q.SessionExists(ctx, id)
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	return err
}

func sessionFromRow(r driver.Session) Session {
	s := Session{
		ID: r.ID, Source: r.Source, ParentID: rules.Str(r.ParentSessionID), UserID: rules.Str(r.UserID),
		Model: rules.Str(r.Model), ModelConfig: rules.Str(r.ModelConfigJson), SystemPrompt: rules.Str(r.SystemPrompt),
		Cwd: rules.Str(r.Cwd), Title: rules.Str(r.Title), StartedAt: fromMillis(r.StartedAt),
		EndReason: rules.Str(r.EndReason), MessageCount: r.MessageCount, ToolCallCount: r.ToolCallCount,
		Archived: r.Archived != 0, AutoArchived: r.AutoArchived != 0, Pinned: r.Pinned != 0, Hidden: r.Hidden != 0,
		Kind: ChildKind(rules.Str(r.ParentKind)), RewindCount: r.RewindCount, DisplayRevision: r.DisplayRevision,
		Unread: r.LastReadAt != nil && *r.LastReadAt == 0,
	}
	s.ConversationActiveAt = s.StartedAt
	if r.ConversationActiveAt != nil {
		s.ConversationActiveAt = fromMillis(*r.ConversationActiveAt)
	}
	if r.EndedAt != nil {
		s.EndedAt = fromMillis(*r.EndedAt)
	}
	s.TitleRank = TitleRank(r.TitleRank)
	if r.LastActivityAt != nil {
		s.LastActivityAt = fromMillis(*r.LastActivityAt)
	}
	s.ActivityDescription, s.ActivityProvenance = rules.Str(r.LastActivityDescription), rules.Str(r.LastActivityProvenance)
	s.Usage = Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, ReasoningTokens: r.ReasoningTokens,
		APICalls: r.ApiCallCount, EstimatedCostUSD: r.EstimatedCostUsd, ActualCostUSD: r.ActualCostUsd}
	s.GitBranch, s.GitRepoRoot = rules.Str(r.GitBranch), rules.Str(r.GitRepoRoot)
	s.Billing = Billing{Provider: rules.Str(r.BillingProvider), BaseURL: rules.Str(r.BillingBaseUrl), Mode: rules.Str(r.BillingMode),
		CostStatus: rules.Str(r.CostStatus), CostSource: rules.Str(r.CostSource), PricingVersion: rules.Str(r.PricingVersion)}
	s.Routing = Routing{SessionKey: rules.Str(r.SessionKey), ChatID: rules.Str(r.ChatID), ChatType: rules.Str(r.ChatType),
		ThreadID: rules.Str(r.ThreadID), DisplayName: rules.Str(r.DisplayName), OriginJSON: rules.Str(r.OriginJson)}
	if r.CompressionRetryAfter != nil {
		s.CompressionRetryAfter = fromMillis(*r.CompressionRetryAfter)
	}
	s.CompressionError = rules.Str(r.CompressionError)
	s.CompressionFallbackStreak = r.CompressionFallbackStreak
	s.DelegatedFrom = rules.Str(r.DelegatedFrom)
	s.RootStartedAt = s.StartedAt
	if r.RootStartedAt != nil {
		s.RootStartedAt = fromMillis(*r.RootStartedAt)
	}
	return s
}
