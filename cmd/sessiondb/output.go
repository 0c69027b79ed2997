package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// sessionJSON and messageJSON are the CLI's JSON records: snake_case keys,
// times in RFC 3339 (UTC, milliseconds), absent values omitted.
type sessionJSON struct {
	ID            string `json:"id"`
	Source        string `json:"source"`
	ParentID      string `json:"parent_session_id,omitempty"`
	Kind          string `json:"kind,omitempty"`
	UserID        string `json:"user_id,omitempty"`
	Model         string `json:"model,omitempty"`
	Title         string `json:"title,omitempty"`
	Cwd           string `json:"cwd,omitempty"`
	StartedAt     string `json:"started_at"`
	EndedAt       string `json:"ended_at,omitempty"`
	EndReason     string `json:"end_reason,omitempty"`
	MessageCount  int64  `json:"message_count"`
	ToolCallCount int64  `json:"tool_call_count"`
	Archived      bool   `json:"archived"`
	Pinned        bool   `json:"pinned"`
	Hidden        bool   `json:"hidden"`
	Unread        bool   `json:"unread"`
	RewindCount   int64  `json:"rewind_count"`
}

type toolCallJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	ItemID    string `json:"item_id,omitempty"`
}

type messageJSON struct {
	ID             int64          `json:"id"`
	SessionID      string         `json:"session_id"`
	Role           string         `json:"role"`
	Content        string         `json:"content"`
	ToolName       string         `json:"tool_name,omitempty"`
	ToolCallID     string         `json:"tool_call_id,omitempty"`
	ToolCalls      []toolCallJSON `json:"tool_calls,omitempty"`
	Reasoning      string         `json:"reasoning,omitempty"`
	FinishReason   string         `json:"finish_reason,omitempty"`
	TokenCount     int64          `json:"token_count,omitempty"`
	State          string         `json:"state"`
	Summary        bool           `json:"summary,omitempty"`
	OriginID       int64          `json:"origin_id,omitempty"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
	CreatedAt      string         `json:"created_at"`
	// The message shape: parts as the store keeps them, and the caller's
	// JSON (metadata, reasoning details) as JSON values.
	Parts             []db.Part       `json:"parts,omitempty"`
	Model             string          `json:"model,omitempty"`
	PlatformMessageID string          `json:"platform_message_id,omitempty"`
	Metadata          json.RawMessage `json:"metadata,omitempty"`
	ReasoningDetails  json.RawMessage `json:"reasoning_details,omitempty"`
	ReasoningContent  string          `json:"reasoning_content,omitempty"`
	Observed          bool            `json:"observed,omitempty"`
	EffectDisposition string          `json:"effect_disposition,omitempty"`
}

// ms renders a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func toSessionJSON(s db.Session) sessionJSON {
	return sessionJSON{
		ID: s.ID, Source: s.Source, ParentID: s.ParentID, UserID: s.UserID, Model: s.Model,
		Title: s.Title, Cwd: s.Cwd, StartedAt: stamp(s.StartedAt), EndedAt: stamp(s.EndedAt),
		EndReason: s.EndReason, MessageCount: s.MessageCount, ToolCallCount: s.ToolCallCount,
		Archived: s.Archived, Pinned: s.Pinned, Hidden: s.Hidden, Kind: string(s.Kind),
		Unread: s.Unread, RewindCount: s.RewindCount,
	}
}

func toMessageJSON(m db.Message) messageJSON {
	out := messageJSON{
		ID: m.ID, SessionID: m.SessionID, Role: string(m.Role), Content: m.Content,
		ToolName: m.ToolName, ToolCallID: m.ToolCallID, Reasoning: m.Reasoning,
		FinishReason: m.FinishReason, TokenCount: m.TokenCount, State: string(m.State),
		IdempotencyKey: m.IdempotencyKey, CreatedAt: stamp(m.CreatedAt), Summary: m.Summary,
		OriginID: m.OriginID, Parts: m.Parts, Model: m.Model, PlatformMessageID: m.PlatformMessageID,
		ReasoningContent: m.ReasoningContent, Observed: m.Observed, EffectDisposition: m.EffectDisposition,
	}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, toolCallJSON{ID: c.ID, Name: c.Name, Arguments: c.Arguments, ItemID: c.ItemID}) // the provider's fields; UIDs are not shown
	}
	if m.Metadata != "" {
		out.Metadata = json.RawMessage(m.Metadata)
	}
	if m.ReasoningDetails != "" {
		out.ReasoningDetails = json.RawMessage(m.ReasoningDetails)
	}
	return out
}

// plural writes a count with its noun: "1 tool call", "2 tool calls".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// singular turns a plural noun of the CLI's ("sessions", "hits") back.
func singular(noun string) string { return strings.TrimSuffix(noun, "s") }

// mapAll converts every element (records to their JSON form).
func mapAll[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, x := range in {
		out[i] = f(x)
	}
	return out
}

// writeJSON writes v indented, with <, > and & as themselves (stored text
// is data, not HTML).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printSessions(w io.Writer, ss []db.Session) error { return printSessionTable(w, ss, true) }

// printSessionTable prints sessions as a table, with its header line or
// without (the pages after the first of --all).
func printSessionTable(w io.Writer, ss []db.Session, header bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if header {
		fmt.Fprintln(tw, "ID\tSOURCE\tSTARTED\tMESSAGES\tENDED\tTITLE")
	}
	for _, s := range ss {
		ended := "-"
		if s.Ended() {
			ended = s.EndReason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", oneLine(s.ID), oneLine(s.Source),
			s.StartedAt.Local().Format("2006-01-02 15:04"), s.MessageCount, oneLine(ended), oneLine(s.Title))
	}
	return tw.Flush()
}

func printSession(w io.Writer, s db.Session) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, oneLine(v))
		}
	}
	row("id", s.ID)
	row("source", s.Source)
	row("title", s.Title)
	row("parent", s.ParentID)
	row("kind", string(s.Kind))
	row("user", s.UserID)
	row("model", s.Model)
	row("cwd", s.Cwd)
	row("started", stamp(s.StartedAt))
	row("ended", stamp(s.EndedAt))
	row("end reason", s.EndReason)
	row("messages", fmt.Sprint(s.MessageCount))
	row("tool calls", fmt.Sprint(s.ToolCallCount))
	return tw.Flush()
}

// printMessages prints a transcript: one block per message.
func printMessages(w io.Writer, ms []db.Message) error {
	for _, m := range ms {
		head := fmt.Sprintf("#%d %s %s", m.ID, m.CreatedAt.Local().Format("15:04:05"), m.Role)
		if m.ToolName != "" {
			head += " (" + oneLine(m.ToolName) + ")"
		}
		if m.Summary {
			head += " (summary)"
		}
		if m.State != db.StateActive {
			head += " [" + string(m.State) + "]"
		}
		if m.Model != "" {
			head += " · " + oneLine(m.Model)
		}
		if _, err := fmt.Fprintln(w, head); err != nil {
			return err
		}
		if m.Content != "" {
			fmt.Fprintln(w, transcript(m.Content))
		}
		for _, p := range m.Parts {
			if ref := partReference(p); ref != "" {
				fmt.Fprintln(w, "    "+ref)
			}
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(w, "    -> %s(%s) [%s]\n", oneLine(c.Name), oneLine(c.Arguments), oneLine(c.ID))
		}
	}
	return nil
}

// partReference is one line for a part the plain text does not show (an
// image or a file: what and where), "" for the others — text and tool
// results are the content, tool uses the tool calls.
func partReference(p db.Part) string {
	if p.Type != db.PartImage && p.Type != db.PartFile {
		return ""
	}
	where := p.URL
	if p.BlobID != "" {
		where = "blob " + p.BlobID
	} else if strings.HasPrefix(where, "data:") {
		where = fmt.Sprintf("inline, %d bytes", len(where)) // the data is no reading matter
	}
	what := string(p.Type)
	if p.Name != "" {
		what += " " + p.Name
	}
	return fmt.Sprintf("[%s %s: %s]", oneLine(what), oneLine(p.MediaType), oneLine(where))
}

// titleJSON, usageJSON, modelUsageJSON, usageReportJSON and handoffJSON
// are the views of the title, usage and handoff commands.
type titleJSON struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
	TitleRank string `json:"title_rank"` // derived, generated or user
}

type usageJSON struct {
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	APICalls         int64   `json:"api_calls"`
	EstimatedCostUSD float64 `json:"estimated_cost_usd"`
	ActualCostUSD    float64 `json:"actual_cost_usd"`
}

// modelUsageJSON is one row: per (model, task, billing route) for a
// session or a delegation tree, per (model, task) for store totals (which
// sum the routes and name none).
type modelUsageJSON struct {
	Model string `json:"model"`
	Task  string `json:"task"` // "" = the main loop
	usageJSON
	FirstSeen       string `json:"first_seen_at"`
	LastSeen        string `json:"last_seen_at"`
	BillingProvider string `json:"billing_provider,omitempty"`
	BillingBaseURL  string `json:"billing_base_url,omitempty"`
	BillingMode     string `json:"billing_mode,omitempty"`
	CostStatus      string `json:"cost_status,omitempty"`
	CostSource      string `json:"cost_source,omitempty"`
}

// usageReportJSON is one session's usage (session_id set), a delegation
// tree's (root_session_id set: usage --tree) or store totals.
type usageReportJSON struct {
	SessionID     string           `json:"session_id,omitempty"`
	RootSessionID string           `json:"root_session_id,omitempty"`
	SessionIDs    []string         `json:"session_ids,omitempty"`
	Total         usageJSON        `json:"total"`               // the main loop only
	Auxiliary     *usageJSON       `json:"auxiliary,omitempty"` // usage --tree: the auxiliary tasks' sum
	Models        []modelUsageJSON `json:"models"`
}

// providerReportJSON is usage --by provider: store totals per billing
// provider ("" = recorded without one), auxiliary tasks included.
type providerReportJSON struct {
	Providers []providerUsageJSON `json:"providers"`
}

type providerUsageJSON struct {
	Provider string `json:"provider"`
	usageJSON
	FirstSeen string `json:"first_seen_at"`
	LastSeen  string `json:"last_seen_at"`
}

func toProviderUsageJSON(p db.ProviderUsage) providerUsageJSON {
	return providerUsageJSON{Provider: p.Provider, usageJSON: toUsageJSON(p.Usage),
		FirstSeen: stamp(p.FirstSeen), LastSeen: stamp(p.LastSeen)}
}

type handoffJSON struct {
	SessionID string `json:"session_id"`
	State     string `json:"state"` // none, pending, running, completed, failed
	Platform  string `json:"platform,omitempty"`
	Holder    string `json:"holder,omitempty"`
	Error     string `json:"error,omitempty"`
	UpdatedAt string `json:"updated_at,omitempty"`
}

func toTitleJSON(s db.Session) titleJSON {
	return titleJSON{SessionID: s.ID, Title: s.Title, TitleRank: s.TitleRank.String()}
}

func toUsageJSON(u db.Usage) usageJSON { return usageJSON(u) }

func toModelUsageJSON(m db.ModelUsage) modelUsageJSON {
	return modelUsageJSON{Model: m.Model, Task: m.Task, usageJSON: toUsageJSON(m.Usage),
		FirstSeen: stamp(m.FirstSeen), LastSeen: stamp(m.LastSeen),
		BillingProvider: m.Billing.Provider, BillingBaseURL: m.Billing.BaseURL, BillingMode: m.Billing.Mode,
		CostStatus: m.Billing.CostStatus, CostSource: m.Billing.CostSource}
}

func toHandoffJSON(id string, h db.HandoffState) handoffJSON {
	state := string(h.State)
	if h.State == db.HandoffNone {
		state = "none"
	}
	return handoffJSON{SessionID: id, State: state, Platform: h.Platform, Holder: h.Holder,
		Error: h.Error, UpdatedAt: stamp(h.UpdatedAt)}
}
