package db

import (
	"context"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
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
	Pinned        bool
	Hidden        bool
	// Unread: explicitly marked unread (MarkUnread) and not read since.
	Unread bool
	// RewindCount counts the rewinds done on this session.
	RewindCount int64
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
	if err := checkID("session id", n.ID); err != nil {
		return err
	}
	if n.ParentID != "" {
		if err := checkID("parent session id", n.ParentID); err != nil {
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
	if n.Title, err = normalizeTitle(n.Title); err != nil {
		return err
	}
	for what, v := range map[string]string{"source": n.Source, "user id": n.UserID, "model": n.Model, "title": n.Title} {
		if err := checkLabel(what, v); err != nil {
			return err
		}
	}
	for what, v := range map[string]string{"model config": n.ModelConfig, "system prompt": n.SystemPrompt, "cwd": n.Cwd} {
		if err := checkText(what, v); err != nil {
			return err
		}
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
	if n.Kind == ChildCompression {
		// A continuation must end its parent in the same transaction, or the
		// conversation would have two live tips.
		return Session{}, false, opErr(op, n.ID, invalid("a compression child is made by PublishCompressionChild"))
	}
	err = s.write(ctx, op, n.ID, s.opts.WritePatience, func(ctx context.Context, tx gen.DBTX) error {
		n := n // the parent's working directory fills an empty one (on every replay)
		if n.ParentID != "" {
			parent, err := queries.SessionGet(ctx, tx, n.ParentID)
			if err != nil {
				return fmt.Errorf("parent session %q: %w", n.ParentID, err)
			}
			n.Cwd = orDefault(n.Cwd, str(parent.Cwd))
		}
		exists, err := queries.SessionExists(ctx, tx, n.ID)
		if err != nil {
			return err
		}
		created = exists == 0
		if created {
			if err := titleFree(ctx, tx, n.UserID, n.Title); err != nil {
				return err
			}
			if _, err := queries.SessionInsert(ctx, tx, insertSessionParams(n, now())); err != nil {
				return err
			}
		}
		if !created && op == "ensure session" {
			if err := queries.SessionFillUnset(ctx, tx, gen.SessionFillUnsetParams{ID: n.ID, Source: n.Source,
				UserID: ptr(n.UserID), Model: ptr(n.Model), ModelConfigJson: ptr(n.ModelConfig),
				SystemPrompt: ptr(n.SystemPrompt), Cwd: ptr(n.Cwd)}); err != nil {
				return err
			}
		}
		row, err := queries.SessionGet(ctx, tx, n.ID)
		sess = sessionFromRow(row)
		return err
	})
	return sess, created, err
}

// insertSessionParams maps a normalized NewSession to its row.
func insertSessionParams(n NewSession, startedAt int64) gen.SessionInsertParams {
	rank := int64(TitleDerived) // no title
	if n.Title != "" {
		rank = int64(TitleUser) // a title given at creation was chosen by someone
	}
	return gen.SessionInsertParams{
		ID: n.ID, Source: n.Source, ParentSessionID: ptr(n.ParentID), ParentKind: ptr(string(n.Kind)),
		UserID: ptr(n.UserID), Model: ptr(n.Model), ModelConfigJson: ptr(n.ModelConfig),
		SystemPrompt: ptr(n.SystemPrompt), Cwd: ptr(n.Cwd), Title: ptr(n.Title), TitleRank: rank,
		StartedAt: startedAt,
	}
}

// Session returns the session with id, or ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	var sess Session
	err := s.read(ctx, "get session", id, func(q gen.DBTX) error {
		row, err := queries.SessionGet(ctx, q, id)
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
	if err := checkLabel("end reason", reason); err != nil {
		return false, opErr("end session", id, err)
	}
	err = s.write(ctx, "end session", id, s.opts.WritePatience, func(ctx context.Context, tx gen.DBTX) error {
		at := now()
		n, err := queries.SessionEnd(ctx, tx, gen.SessionEndParams{ID: id, EndedAt: &at, EndReason: &reason})
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
	p := gen.SessionListParams{Source: ptr(f.Source), ParentSessionID: ptr(f.ParentID),
		RowLimit: int64(f.Limit), RowOffset: int64(f.Offset)}
	if f.Ended != nil {
		p.Ended = flag(*f.Ended)
	}
	var out []Session
	err := s.read(ctx, "list sessions", "", func(q gen.DBTX) error {
		rows, err := queries.SessionList(ctx, q, p)
		out = make([]Session, len(rows))
		for i, r := range rows {
			out[i] = sessionFromRow(r)
		}
		return err
	})
	return out, err
}

// sessionMustExist returns ErrNotFound when no session has id.
func sessionMustExist(ctx context.Context, q gen.DBTX, id string) error {
	n, err := queries.SessionExists(ctx, q, id)
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	return err
}

func sessionFromRow(r gen.Session) Session {
	s := Session{
		ID: r.ID, Source: r.Source, ParentID: str(r.ParentSessionID), UserID: str(r.UserID),
		Model: str(r.Model), ModelConfig: str(r.ModelConfigJson), SystemPrompt: str(r.SystemPrompt),
		Cwd: str(r.Cwd), Title: str(r.Title), StartedAt: fromMillis(r.StartedAt),
		EndReason: str(r.EndReason), MessageCount: r.MessageCount, ToolCallCount: r.ToolCallCount,
		Archived: r.Archived != 0, Pinned: r.Pinned != 0, Hidden: r.Hidden != 0,
		Kind: ChildKind(str(r.ParentKind)), RewindCount: r.RewindCount,
		Unread: r.LastReadAt != nil && *r.LastReadAt == 0,
	}
	if r.EndedAt != nil {
		s.EndedAt = fromMillis(*r.EndedAt)
	}
	s.TitleRank = TitleRank(r.TitleRank)
	if r.LastActivityAt != nil {
		s.LastActivityAt = fromMillis(*r.LastActivityAt)
	}
	s.ActivityDescription, s.ActivityProvenance = str(r.LastActivityDescription), str(r.LastActivityProvenance)
	s.Usage = Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, ReasoningTokens: r.ReasoningTokens,
		APICalls: r.ApiCallCount, EstimatedCostUSD: r.EstimatedCostUsd, ActualCostUSD: r.ActualCostUsd}
	s.GitBranch, s.GitRepoRoot = str(r.GitBranch), str(r.GitRepoRoot)
	s.Billing = Billing{Provider: str(r.BillingProvider), BaseURL: str(r.BillingBaseUrl), Mode: str(r.BillingMode),
		CostStatus: str(r.CostStatus), CostSource: str(r.CostSource), PricingVersion: str(r.PricingVersion)}
	s.Routing = Routing{SessionKey: str(r.SessionKey), ChatID: str(r.ChatID), ChatType: str(r.ChatType),
		ThreadID: str(r.ThreadID), DisplayName: str(r.DisplayName), OriginJSON: str(r.OriginJson)}
	if r.CompressionRetryAfter != nil {
		s.CompressionRetryAfter = fromMillis(*r.CompressionRetryAfter)
	}
	s.CompressionError = str(r.CompressionError)
	return s
}
