package store

import (
	"encoding/json"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// The export format: JSON Lines. The first line is a header naming the
// format and its version; then each session is one "session" line followed
// by its "message" lines (in order) and its "usage" lines. Every line is
// self-describing (its "type"). Times are Unix milliseconds (UTC), as
// stored. Messages are named by their 1-based position in their session
// (seq), so a copy made by compression names its origin portably.
//
// Exported: what a conversation is. Not exported: leases, handoff state
// and activity labels (a process's transient claims), message ids, and
// the counters derived from rows (recomputed on import).
//
// A message's parts, model, metadata, platform message id, reasoning
// details, observed mark, effect disposition and reasoning content were
// added within version 1, as optional fields: a file without
// them (written before) reads as messages without them, and a reader
// that predates them refuses a file that has them by name (records are
// decoded strictly), so none of them is ever dropped unseen. So was the
// role "note" (RoleNote): a reader that predates it refuses a file holding
// a note by its role, so a note is never read as anyone's words.
// So were a tool call's "uid" (inside "tool_calls") and a tool result's
// "call_uid" (issue 35): a file without them imports, its calls reading
// UIDs derived from their row and its results pairing on read.
const (
	exportFormat  = "sessiondb-export"
	exportVersion = 1
)

type headerRecord struct {
	Type    string `json:"type"`
	Format  string `json:"format"`
	Version int    `json:"version"`
}

type sessionRecord struct {
	Type         string `json:"type"`
	ID           string `json:"id"`
	Source       string `json:"source"`
	ParentID     string `json:"parent_session_id,omitempty"`
	Kind         string `json:"kind,omitempty"`
	UserID       string `json:"user_id,omitempty"`
	Model        string `json:"model,omitempty"`
	ModelConfig  string `json:"model_config,omitempty"`
	SystemPrompt string `json:"system_prompt,omitempty"`
	Cwd          string `json:"cwd,omitempty"`
	StartedAt    int64  `json:"started_at"`
	EndedAt      *int64 `json:"ended_at,omitempty"`
	EndReason    string `json:"end_reason,omitempty"`
	Title        string `json:"title,omitempty"`
	TitleRank    int64  `json:"title_rank"`
	usageFields
	Archived    bool   `json:"archived"`
	Pinned      bool   `json:"pinned"`
	Hidden      bool   `json:"hidden"`
	LastReadAt  *int64 `json:"last_read_at,omitempty"`
	RewindCount int64  `json:"rewind_count"`
	// DelegatedFrom marks a delegate whose link the kind does not show
	// (its parent gone: Session.DelegatedFrom); added within version 1,
	// optional, and written only then.
	DelegatedFrom string `json:"delegated_from,omitempty"`
	// The session's billing (Session.Billing): its route, which follows the
	// last accounted call, and how its cost is known. Added within version
	// 1, optional, each written only when set.
	BillingProvider string `json:"billing_provider,omitempty"`
	BillingBaseURL  string `json:"billing_base_url,omitempty"`
	BillingMode     string `json:"billing_mode,omitempty"`
	CostStatus      string `json:"cost_status,omitempty"`
	CostSource      string `json:"cost_source,omitempty"`
	PricingVersion  string `json:"pricing_version,omitempty"`
}

// usageFields are the token and cost counters of a session or usage
// record (flattened into it by encoding/json).
type usageFields struct {
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	APICalls         int64   `json:"api_call_count"`
	EstimatedCostUSD float64 `json:"estimated_cost_usd"`
	ActualCostUSD    float64 `json:"actual_cost_usd"`
}

func (u usageFields) usage() Usage { return Usage(u) }

type messageRef struct {
	SessionID string `json:"session_id"`
	Seq       int64  `json:"seq"`
}

type messageRecord struct {
	Type           string          `json:"type"`
	SessionID      string          `json:"session_id"`
	Seq            int64           `json:"seq"`
	Role           string          `json:"role"`
	Content        string          `json:"content"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolCallID     string          `json:"tool_call_id,omitempty"`
	ToolCalls      json.RawMessage `json:"tool_calls,omitempty"`
	Reasoning      string          `json:"reasoning,omitempty"`
	FinishReason   string          `json:"finish_reason,omitempty"`
	TokenCount     *int64          `json:"token_count,omitempty"`
	State          string          `json:"state"`
	Summary        bool            `json:"summary,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	CreatedAt      int64           `json:"created_at"`
	Origin         *messageRef     `json:"origin,omitempty"`
	// Parts is the JSON array the store keeps (its own encoding of
	// []Part). ReasoningDetails and Metadata are the caller's JSON text,
	// carried as strings so that their bytes survive (a nested value would
	// be re-encoded: spacing and key order are the provider's).
	Parts             json.RawMessage `json:"parts,omitempty"`
	ReasoningDetails  string          `json:"reasoning_details,omitempty"`
	Model             string          `json:"model,omitempty"`
	PlatformMessageID string          `json:"platform_message_id,omitempty"`
	Metadata          string          `json:"metadata,omitempty"`
	Observed          bool            `json:"observed,omitempty"`
	EffectDisposition string          `json:"effect_disposition,omitempty"`
	ReasoningContent  string          `json:"reasoning_content,omitempty"`
	// DisplayKind and UID (Message.DisplayKind, Message.UID) travel with
	// the message: an import keeps both, and mints a UID for a message
	// exported before there were any.
	DisplayKind string `json:"display_kind,omitempty"`
	UID         string `json:"uid,omitempty"`
	// CallUID is a tool result's stored pairing (NewMessage.CallUID), when
	// it has one; a result paired on read is paired again after import.
	// Added within version 1, as the tool calls' own "uid".
	CallUID string `json:"call_uid,omitempty"`
	// ToolEndedAt (Unix milliseconds) and ToolDurationMs are a tool
	// result's timing (Message.ToolEndedAt, ToolDuration); added within
	// version 1, absent when not said.
	ToolEndedAt    *int64 `json:"tool_ended_at,omitempty"`
	ToolDurationMs *int64 `json:"tool_duration_ms,omitempty"`
}

// usageRecord is one (model, task, billing route) row of a session. The
// billing fields were added within version 1, as optional fields: a file
// written before them reads as rows of no route (which is what it could
// hold only when the store kept one route per model), and a reader that
// predates them refuses a file that has them by name.
type usageRecord struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Task      string `json:"task"`
	usageFields
	FirstSeenAt     int64  `json:"first_seen_at"`
	LastSeenAt      int64  `json:"last_seen_at"`
	BillingProvider string `json:"billing_provider,omitempty"`
	BillingBaseURL  string `json:"billing_base_url,omitempty"`
	BillingMode     string `json:"billing_mode,omitempty"`
	CostStatus      string `json:"cost_status,omitempty"`
	CostSource      string `json:"cost_source,omitempty"`
}

// usageKey is the row a usage record names within its session.
type usageKey struct{ model, task, provider, baseURL, mode string }

func (r *usageRecord) key() usageKey {
	return usageKey{r.Model, r.Task, r.BillingProvider, r.BillingBaseURL, r.BillingMode}
}

func sessionRecordFromRow(r driver.Session) sessionRecord {
	delegatedFrom := rules.Str(r.DelegatedFrom)
	if rules.Str(r.ParentKind) == string(ChildDelegate) && delegatedFrom == rules.Str(r.ParentSessionID) {
		delegatedFrom = "" // the kind says it: a file of a linked delegate stays as it was
	}
	return sessionRecord{Type: "session", ID: r.ID, Source: r.Source, ParentID: rules.Str(r.ParentSessionID),
		Kind: rules.Str(r.ParentKind), UserID: rules.Str(r.UserID), Model: rules.Str(r.Model), ModelConfig: rules.Str(r.ModelConfigJson),
		SystemPrompt: rules.Str(r.SystemPrompt), Cwd: rules.Str(r.Cwd), StartedAt: r.StartedAt, EndedAt: r.EndedAt,
		EndReason: rules.Str(r.EndReason), Title: rules.Str(r.Title), TitleRank: r.TitleRank,
		usageFields: usageFields{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens,
			ReasoningTokens: r.ReasoningTokens, APICalls: r.ApiCallCount, EstimatedCostUSD: r.EstimatedCostUsd,
			ActualCostUSD: r.ActualCostUsd},
		Archived: r.Archived != 0, Pinned: r.Pinned != 0, Hidden: r.Hidden != 0,
		LastReadAt: r.LastReadAt, RewindCount: r.RewindCount, DelegatedFrom: delegatedFrom,
		BillingProvider: rules.Str(r.BillingProvider), BillingBaseURL: rules.Str(r.BillingBaseUrl),
		BillingMode: rules.Str(r.BillingMode), CostStatus: rules.Str(r.CostStatus), CostSource: rules.Str(r.CostSource),
		PricingVersion: rules.Str(r.PricingVersion)}
}

func (r sessionRecord) importParams() driver.SessionImportParams {
	if r.DelegatedFrom == "" && r.Kind == string(ChildDelegate) {
		r.DelegatedFrom = r.ParentID // a file written before the field: the kind says it
	}
	return driver.SessionImportParams{ID: r.ID, Source: r.Source, UserID: rules.Ptr(r.UserID), Model: rules.Ptr(r.Model),
		ModelConfigJson: rules.Ptr(r.ModelConfig), SystemPrompt: rules.Ptr(r.SystemPrompt), Cwd: rules.Ptr(r.Cwd),
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, EndReason: rules.Ptr(r.EndReason), Title: rules.Ptr(r.Title),
		TitleRank: r.TitleRank, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens,
		ReasoningTokens: r.ReasoningTokens, ApiCallCount: r.APICalls, EstimatedCostUsd: r.EstimatedCostUSD,
		ActualCostUsd: r.ActualCostUSD, Archived: rules.B2I(r.Archived), Pinned: rules.B2I(r.Pinned), Hidden: rules.B2I(r.Hidden),
		LastReadAt: r.LastReadAt, RewindCount: r.RewindCount, DelegatedFrom: rules.Ptr(r.DelegatedFrom),
		BillingProvider: rules.Ptr(r.BillingProvider), BillingBaseUrl: rules.Ptr(r.BillingBaseURL),
		BillingMode: rules.Ptr(r.BillingMode), CostStatus: rules.Ptr(r.CostStatus), CostSource: rules.Ptr(r.CostSource),
		PricingVersion: rules.Ptr(r.PricingVersion)}
}

// check validates a session record before anything is written.
func (r *sessionRecord) check() error {
	if err := rules.CheckID("session id", r.ID); err != nil {
		return err
	}
	title, err := rules.SanitizeTitle(r.Title)
	if err != nil {
		return err
	}
	if title != r.Title {
		return invalid("title %q is not in its stored form", r.Title)
	}
	if err := rules.CheckLabels([]rules.Field{
		{Name: "source", Value: r.Source},
		{Name: "user id", Value: r.UserID},
		{Name: "model", Value: r.Model},
		{Name: "end reason", Value: r.EndReason},
		{Name: "billing provider", Value: r.BillingProvider},
		{Name: "billing base url", Value: r.BillingBaseURL},
		{Name: "billing mode", Value: r.BillingMode},
		{Name: "cost status", Value: r.CostStatus},
		{Name: "cost source", Value: r.CostSource},
		{Name: "pricing version", Value: r.PricingVersion},
	}); err != nil {
		return err
	}
	switch {
	case r.Source == "":
		return invalid("empty source")
	case r.Kind != "" && (!ChildKind(r.Kind).Valid() || r.ParentID == ""):
		return invalid("kind %q needs a parent and one of compression, branch, delegate, reset, tool", r.Kind)
	case r.TitleRank < 0 || r.TitleRank > 2:
		return invalid("title rank %d is not 0, 1 or 2", r.TitleRank)
	case r.RewindCount < 0:
		return invalid("negative rewind count")
	}
	if r.ParentID != "" {
		if err := rules.CheckID("parent session id", r.ParentID); err != nil {
			return err
		}
	}
	if r.DelegatedFrom != "" {
		if err := rules.CheckID("delegated from", r.DelegatedFrom); err != nil {
			return err
		}
	}
	if err := rules.CheckJSONObject("model config", r.ModelConfig); err != nil {
		return err
	}
	return r.usage().Validate()
}

// check validates a message record (its place in the file is checked by
// the reader).
func (r *messageRecord) check() error {
	m := NewMessage{Role: Role(r.Role), Content: r.Content, ToolName: r.ToolName, ToolCallID: r.ToolCallID,
		Reasoning: r.Reasoning, FinishReason: r.FinishReason, IdempotencyKey: r.IdempotencyKey,
		ReasoningDetails: r.ReasoningDetails, Model: r.Model, PlatformMessageID: r.PlatformMessageID, Metadata: r.Metadata,
		Summary: r.Summary, Observed: r.Observed, EffectDisposition: r.EffectDisposition, ReasoningContent: r.ReasoningContent,
		DisplayKind: r.DisplayKind, CallUID: r.CallUID}
	if r.ToolEndedAt != nil {
		m.ToolEndedAt = time.UnixMilli(*r.ToolEndedAt)
		if *r.ToolEndedAt == 0 {
			return invalid("tool ended at 0")
		}
	}
	if r.ToolDurationMs != nil {
		if *r.ToolDurationMs <= 0 {
			return invalid("tool duration %d ms is not positive", *r.ToolDurationMs)
		}
		m.ToolDuration = time.Duration(*r.ToolDurationMs) * time.Millisecond
	}
	if err := firstErr(rules.CheckLabel("uid", r.UID), rules.CheckLabel("call uid", r.CallUID)); err != nil {
		return err
	}
	if r.TokenCount != nil {
		m.TokenCount = *r.TokenCount
	}
	var err error
	if m.Parts, err = r.parts(); err != nil {
		return err
	}
	if len(r.ToolCalls) > 0 {
		// Strict: the JSON is stored as it is and SQLite's JSON functions
		// read it (a session's tool call count), so nothing beyond the
		// list of {id, name, arguments} strings may ride along — no field
		// SQLite could refuse halfway through an import (its nesting limit
		// is 1000 levels, Go's 10000).
		if err := decodeStrict(r.ToolCalls, &m.ToolCalls); err != nil {
			return invalid("tool calls are not a list of {id, name, arguments}: %v", err)
		}
	}
	switch MessageState(r.State) {
	case StateActive, StateCompacted, StateRewound:
	default:
		return invalid("state %q is not active, compacted or rewound", r.State)
	}
	if err := m.Validate(); err != nil {
		return err
	}
	return r.fill(m.Parts)
}

// normalize fills what the record's parts imply and it left out, as an
// append does (normalizeParts): the plain-text content, and the tool calls
// of its tool_use parts, so an imported call is counted and searched like
// an appended one. The import's comparisons and inserts both see the
// normalised record.
func (r *messageRecord) normalize() error {
	parts, err := r.parts()
	if err != nil {
		return err
	}
	return r.fill(parts)
}

// fill is normalize with the record's parts already decoded.
func (r *messageRecord) fill(parts []Part) error {
	if len(parts) == 0 {
		return nil
	}
	if r.Content == "" {
		r.Content = PlainText(parts)
	}
	if calls := partToolCalls(parts); len(r.ToolCalls) == 0 && len(calls) > 0 {
		b, err := json.Marshal(calls)
		if err != nil {
			return invalid("tool calls: %v", err)
		}
		r.ToolCalls = b
	}
	return nil
}

func (r *usageRecord) check() error {
	if err := firstErr(rules.CheckLabel("model", r.Model), rules.CheckLabel("task", r.Task)); err != nil {
		return err
	}
	if err := checkUsageBilling(Billing{Provider: r.BillingProvider, BaseURL: r.BillingBaseURL, Mode: r.BillingMode,
		CostStatus: r.CostStatus, CostSource: r.CostSource}); err != nil {
		return err
	}
	return r.usage().Validate()
}

// parts decodes the record's parts, strictly: only the fields of Part.
func (r *messageRecord) parts() ([]Part, error) {
	if len(r.Parts) == 0 {
		return nil, nil
	}
	var parts []Part
	if err := decodeStrict(r.Parts, &parts); err != nil {
		return nil, invalid("parts are not a list of parts: %v", err)
	}
	return parts, nil
}

// partsJSON is the record's parts as the store keeps them (nil for none).
func (r *messageRecord) partsJSON() (*string, error) {
	parts, err := r.parts()
	if err != nil || len(parts) == 0 {
		return nil, err
	}
	b, err := json.Marshal(parts)
	if err != nil {
		return nil, invalid("parts: %v", err)
	}
	return rules.Ptr(string(b)), nil
}
