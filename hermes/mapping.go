package hermes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/internal/searchtext"
	"github.com/sessiondb/sessiondb/store"
)

// How each Hermes column is carried over. A column in neither set that
// holds a value in some row is counted as not representable, by name, so
// nothing the source had is dropped without a trace — including columns
// of Hermes versions newer than this mapping.
var (
	// hermesSessionMapped are the sessions columns sessiondb keeps.
	hermesSessionMapped = set("id", "source", "user_id", "model", "model_config", "system_prompt",
		"system_prompt_hash", "parent_session_id", "started_at", "ended_at", "end_reason",
		"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
		"api_call_count", "estimated_cost_usd", "actual_cost_usd", "cwd", "git_branch", "git_repo_root",
		"billing_provider", "billing_base_url", "billing_mode", "cost_status", "cost_source",
		"pricing_version", "title", "title_source", "handoff_state", "handoff_platform", "handoff_error",
		"compression_failure_cooldown_until", "compression_failure_error", "rewind_count", "archived",
		"pinned", "hidden", "last_read_at", "last_activity_at", "last_activity_description",
		"last_activity_provenance", "session_key", "chat_id", "chat_type", "thread_id", "display_name",
		"origin_json", "compression_fallback_streak")
	// hermesSessionDerived are recomputed from the rows sessiondb imports
	// (counters) or only number Hermes's own bookkeeping.
	hermesSessionDerived = set("message_count", "tool_call_count", "git_metadata_generation")
	hermesMessageMapped  = set("id", "session_id", "role", "content", "tool_call_id", "tool_calls",
		"tool_name", "timestamp", "token_count", "finish_reason", "reasoning", "reasoning_content",
		"reasoning_details", "platform_message_id", "active", "compacted", "_compressed_summary", "observed",
		"effect_disposition")
	// display_identity and display_order are a display cache Hermes
	// rebuilds on read; message_uid is an identity minted at insert.
	hermesMessageDerived = set("display_identity", "display_order", "message_uid")
	hermesUsageMapped    = set("session_id", "model", "task", "billing_provider", "billing_base_url",
		"billing_mode", "api_call_count", "input_tokens", "output_tokens", "cache_read_tokens",
		"cache_write_tokens", "reasoning_tokens", "estimated_cost_usd", "actual_cost_usd",
		"cost_status", "cost_source", "first_seen", "last_seen")
	// hermesTablesRead are read (or are FTS and SQLite internals); rows in
	// any other table are counted as not representable.
	hermesTablesRead = set("sessions", "messages", "session_model_usage", "state_meta",
		"system_prompts", "schema_version", "sqlite_sequence")
	// hermesMetaInternal are Hermes's own state_meta keys: they describe
	// that file (its identity, its index, its maintenance), not the data.
	hermesMetaInternal = set("db_file_generation", "fts_stale", "fts_cjk_stale", "fts_optimize_available",
		"fts_storage_version", "last_auto_prune", "last_vacuum", "last_auto_archive",
		"telegram_dm_topic_schema_version")
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// hermesMetaPrefix namespaces imported state_meta keys: a Hermes key must
// never land on one of sessiondb's own (fts_stale would switch indexing off).
const hermesMetaPrefix = "hermes/"

// hermesKeyPrefix makes an imported message's idempotency key: the source
// row id, unique per session, so an import is safe to run again.
const hermesKeyPrefix = "hermes:"

// tally counts by name (not representable values, refused rows).
type tally map[string]int64

func (t tally) add(k string, n int64) {
	if n != 0 {
		t[k] += n
	}
}

func (t tally) merge(o tally) {
	for k, v := range o {
		t[k] += v
	}
}

// unmapped counts the values of a row that no mapping takes.
func unmapped(t tally, table string, r hermesRow, mapped, derived map[string]bool) {
	for k := range r {
		if !mapped[k] && !derived[k] && r.present(k) {
			t.add(table+"."+k, 1)
		}
	}
}

// mapHermesSession maps a sessions row; lost counts what has no place.
func mapHermesSession(r hermesRow, prompt string, parentRow hermesRow, lost tally) (store.ForeignSession, error) {
	id := r.str("id")
	if err := rules.CheckID("session id", id); err != nil {
		return store.ForeignSession{}, err
	}
	source := r.str("source")
	if source == "" {
		source = "unknown"
	}
	started := r.millis("started_at")
	if started == nil {
		return store.ForeignSession{}, fmt.Errorf("%w: session %q has no start time", store.ErrInvalidInput, id)
	}
	p := store.ForeignSessionRow{
		ID: id, Source: source, StartedAt: *started, EndedAt: r.millis("ended_at"),
		InputTokens: nonNeg(r.int("input_tokens")), OutputTokens: nonNeg(r.int("output_tokens")),
		CacheReadTokens: nonNeg(r.int("cache_read_tokens")), CacheWriteTokens: nonNeg(r.int("cache_write_tokens")),
		ReasoningTokens: nonNeg(r.int("reasoning_tokens")), ApiCallCount: nonNeg(r.int("api_call_count")),
		EstimatedCostUsd: cost(r.float("estimated_cost_usd")), ActualCostUsd: cost(r.float("actual_cost_usd")),
		Archived: rules.B2I(r.int("archived") != 0), Pinned: rules.B2I(r.int("pinned") != 0), Hidden: rules.B2I(r.int("hidden") != 0),
		RewindCount:    nonNeg(r.int("rewind_count")),
		LastActivityAt: r.millis("last_activity_at"), CompressionRetryAfter: r.millis("compression_failure_cooldown_until"),
		TitleRank:                 int64(store.TitleDerived),
		CompressionFallbackStreak: nonNeg(r.int("compression_fallback_streak")),
		DelegatedFrom:             delegateMarker(r),
	}
	if p.EndedAt != nil {
		p.EndReason = rules.Ptr(r.str("end_reason"))
	} else if r.present("end_reason") {
		lost.add("sessions.end_reason(without ended_at)", 1)
	}
	if r["last_read_at"] != nil {
		p.LastReadAt = r.millis("last_read_at")
	}
	labels := []struct {
		col string
		dst **string
	}{
		{"user_id", &p.UserID}, {"model", &p.Model}, {"cwd", &p.Cwd}, {"git_branch", &p.GitBranch},
		{"git_repo_root", &p.GitRepoRoot}, {"billing_provider", &p.BillingProvider},
		{"billing_base_url", &p.BillingBaseUrl}, {"billing_mode", &p.BillingMode},
		{"cost_status", &p.CostStatus}, {"cost_source", &p.CostSource}, {"pricing_version", &p.PricingVersion},
		{"session_key", &p.SessionKey}, {"chat_id", &p.ChatID}, {"chat_type", &p.ChatType},
		{"thread_id", &p.ThreadID}, {"display_name", &p.DisplayName},
		{"handoff_platform", &p.HandoffPlatform}, {"last_activity_description", &p.LastActivityDescription},
		{"last_activity_provenance", &p.LastActivityProvenance},
	}
	for _, l := range labels {
		v := r.str(l.col)
		if err := rules.CheckLabel(l.col, v); err != nil {
			lost.add("sessions."+l.col+"(invalid)", 1)
			continue
		}
		*l.dst = rules.Ptr(v)
	}
	for _, t := range []struct {
		col string
		v   string
		dst **string
	}{
		{"system_prompt", prompt, &p.SystemPrompt}, {"handoff_error", r.str("handoff_error"), &p.HandoffError},
		{"compression_failure_error", r.str("compression_failure_error"), &p.CompressionError},
	} {
		if err := rules.CheckText(t.col, t.v); err != nil {
			lost.add("sessions."+t.col+"(invalid)", 1)
			continue
		}
		*t.dst = rules.Ptr(t.v)
	}
	for _, j := range []struct {
		col string
		dst **string
	}{{"model_config", &p.ModelConfigJson}, {"origin_json", &p.OriginJson}} {
		v := r.str(j.col)
		if v == "" {
			continue
		}
		if !utf8.ValidString(v) || !json.Valid([]byte(v)) {
			lost.add("sessions."+j.col+"(not JSON)", 1)
			continue
		}
		// A model config is a JSON object or nothing, as on every other
		// way in: SetModel merges into it.
		if j.col == "model_config" && rules.CheckJSONObject("model config", v) != nil {
			lost.add("sessions.model_config(not a JSON object)", 1)
			continue
		}
		*j.dst = &v
	}
	if st := r.str("handoff_state"); st != "" {
		switch store.HandoffStatus(st) {
		case store.HandoffPending, store.HandoffRunning, store.HandoffCompleted, store.HandoffFailed:
			p.HandoffState = &st
			p.HandoffUpdatedAt = lastAlive(r)
		default:
			lost.add("sessions.handoff_state("+st+")", 1)
		}
	}
	if title := r.str("title"); title != "" {
		t, err := rules.SanitizeTitle(title)
		if err != nil {
			lost.add("sessions.title(invalid)", 1)
		} else {
			p.Title, p.TitleRank = &t, int64(hermesTitleRank(r.str("title_source")))
		}
	}
	unmapped(lost, "sessions", r, hermesSessionMapped, hermesSessionDerived)
	fs := store.ForeignSession{Row: p, Parent: r.str("parent_session_id")}
	if fs.Parent == id {
		fs.Parent = ""
	}
	if fs.Parent != "" {
		fs.ParentKind = hermesChildKind(r, fs.Parent, parentRow)
	}
	return fs, nil
}

// lastAlive is when the source last saw the session: its latest activity,
// its end or its start.
func lastAlive(r hermesRow) *int64 {
	for _, k := range []string{"last_activity_at", "ended_at", "started_at"} {
		if v := r.millis(k); v != nil {
			return v
		}
	}
	return nil
}

// hermesTitleRank maps Hermes's title_source; no source counts as a user's
// title, as Hermes itself treats it.
func hermesTitleRank(src string) store.TitleRank {
	switch src {
	case "derived":
		return store.TitleDerived
	case "llm", "generated", "auto":
		return store.TitleGenerated
	}
	return store.TitleUser
}

// hermesChildKind says what a session is to its parent, by Hermes's rules:
// a lineage marker in model_config counts only when it names this parent
// (continuations copy model_config); a sub-agent or tool source; a parent
// ended by compression; a reset (the parent ended with a reset reason and
// both share a session key). Otherwise the kind is unknown ("").
func hermesChildKind(r hermesRow, parent string, parentRow hermesRow) store.ChildKind {
	var cfg map[string]any
	_ = json.Unmarshal([]byte(r.str("model_config")), &cfg)
	marker := func(k string) bool { v, _ := cfg[k].(string); return v == parent }
	switch {
	case marker("_delegate_from"):
		return store.ChildDelegate
	case marker("_branched_from"):
		return store.ChildBranch
	case marker("_reset_from"):
		return store.ChildReset
	case r.str("source") == "subagent":
		return store.ChildDelegate
	case r.str("source") == "tool":
		return store.ChildTool
	}
	if parentRow == nil {
		return ""
	}
	switch parentRow.str("end_reason") {
	case "compression": // the end reason of a session compressed into a continuation
		return store.ChildCompression
	case "session_reset", "session_switch", "idle", "daily", "suspended", "resume_pending_expired":
		if k := r.str("session_key"); k != "" && k == parentRow.str("session_key") {
			return store.ChildReset
		}
	}
	return ""
}

// delegateMarker is the session a Hermes delegate was made for (its
// model_config's _delegate_from), kept even when the parent link is gone:
// Hermes hides such a session from its pickers, and so does sessiondb
// (Session.DelegatedFrom). nil when there is none or it is no session id.
func delegateMarker(r hermesRow) *string {
	var cfg map[string]any
	if json.Unmarshal([]byte(r.str("model_config")), &cfg) != nil {
		return nil
	}
	from, _ := cfg["_delegate_from"].(string)
	if from == "" || rules.CheckID("delegated from", from) != nil {
		return nil
	}
	return &from
}

// mapHermesMessage maps a messages row. A row sessiondb cannot hold (an
// unknown role, text that is not UTF-8) returns an error: it is refused
// and counted, never half-imported.
func mapHermesMessage(r hermesRow, lost tally) (store.ForeignMessage, error) {
	role := store.Role(r.str("role"))
	if !role.Valid() {
		return store.ForeignMessage{}, fmt.Errorf("role %q", role)
	}
	created := r.millis("timestamp")
	if created == nil {
		return store.ForeignMessage{}, fmt.Errorf("no timestamp")
	}
	nm := store.NewMessage{Role: role, Content: r.str("content"), ToolName: r.str("tool_name"),
		ToolCallID: r.str("tool_call_id"), Reasoning: r.str("reasoning"), FinishReason: r.str("finish_reason"),
		TokenCount: nonNeg(r.int("token_count")), ReasoningContent: r.str("reasoning_content"),
		Observed: r.int("observed") != 0}
	if ed := r.str("effect_disposition"); ed != "" {
		if role == store.RoleTool && rules.CheckLabel("effect disposition", ed) == nil {
			nm.EffectDisposition = ed
		} else {
			lost.add("messages.effect_disposition(not on a tool result, or invalid)", 1)
		}
	}
	if tc := r.str("tool_calls"); tc != "" {
		calls, extra, ok := parseHermesToolCalls(tc)
		if !ok {
			lost.add("messages.tool_calls(unreadable)", 1)
		}
		lost.add("messages.tool_calls(fields beyond id, name, arguments)", extra)
		nm.ToolCalls = calls
	}
	if err := nm.Validate(); err != nil {
		return store.ForeignMessage{}, err
	}
	var toolCalls, toolText *string
	if len(nm.ToolCalls) > 0 {
		b, err := json.Marshal(nm.ToolCalls)
		if err != nil {
			return store.ForeignMessage{}, fmt.Errorf("%w: tool calls: %v", store.ErrInvalidInput, err)
		}
		toolCalls = rules.Ptr(string(b))
		toolText = searchtext.ToolText(*toolCalls)
	}
	var tokens *int64
	if nm.TokenCount > 0 {
		tokens = &nm.TokenCount
	}
	state := store.StateActive
	switch {
	case r["active"] != nil && r.int("active") == 0 && r.int("compacted") != 0:
		state = store.StateCompacted
	case r["active"] != nil && r.int("active") == 0:
		state = store.StateRewound
	}
	fm := store.ForeignMessage{
		Role: string(nm.Role), Content: nm.Content, ToolName: rules.Ptr(nm.ToolName), ToolCallID: rules.Ptr(nm.ToolCallID),
		ToolCallsJson: toolCalls, ToolText: toolText, Reasoning: rules.Ptr(nm.Reasoning), FinishReason: rules.Ptr(nm.FinishReason),
		TokenCount: tokens, State: string(state), IsSummary: rules.B2I(r.int("_compressed_summary") != 0),
		ReasoningContent: rules.Ptr(nm.ReasoningContent), Observed: rules.B2I(nm.Observed),
		EffectDisposition: rules.Ptr(nm.EffectDisposition),
		IdempotencyKey:    rules.Ptr(hermesKeyPrefix + strconv.FormatInt(r.int("id"), 10)), CreatedAt: *created,
	}
	if d := r.str("reasoning_details"); d != "" {
		if utf8.ValidString(d) && json.Valid([]byte(d)) {
			fm.ReasoningDetails = &d
		} else {
			lost.add("messages.reasoning_details(not JSON)", 1)
		}
	}
	if pm := r.str("platform_message_id"); pm != "" {
		if rules.CheckLabel("platform message id", pm) == nil {
			fm.PlatformMessageID = &pm
		} else {
			lost.add("messages.platform_message_id(invalid)", 1)
		}
	}
	unmapped(lost, "messages", r, hermesMessageMapped, hermesMessageDerived)
	return fm, nil
}

// parseHermesToolCalls reads tool calls in OpenAI's function format
// ([{"id", "type": "function", "function": {"name", "arguments"}}]) or the
// flat one ({"id", "name", "arguments"}). extra counts calls that carried
// more than sessiondb keeps (another type, other keys, arguments that were
// not a string — kept as their JSON text).
func parseHermesToolCalls(text string) (calls []store.ToolCall, extra int64, ok bool) {
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, 0, false
	}
	for _, c := range raw {
		lossy := false
		tc := store.ToolCall{}
		fields := c
		if fn, has := c["function"]; has {
			var inner map[string]json.RawMessage
			if err := json.Unmarshal(fn, &inner); err != nil {
				return nil, 0, false
			}
			for k := range c {
				if k != "id" && k != "type" && k != "function" {
					lossy = true
				}
			}
			if t, has := c["type"]; has && string(t) != `"function"` {
				lossy = true
			}
			fields = inner
			_ = json.Unmarshal(c["id"], &tc.ID)
			for k := range inner {
				if k != "name" && k != "arguments" {
					lossy = true
				}
			}
		} else {
			_ = json.Unmarshal(c["id"], &tc.ID)
			for k := range c {
				if k != "id" && k != "name" && k != "arguments" && k != "type" {
					lossy = true
				}
			}
		}
		_ = json.Unmarshal(fields["name"], &tc.Name)
		if a, has := fields["arguments"]; has {
			if err := json.Unmarshal(a, &tc.Arguments); err != nil {
				tc.Arguments = string(bytes.TrimSpace(a))
				lossy = true
			}
		}
		if lossy {
			extra++
		}
		calls = append(calls, tc)
	}
	return calls, extra, true
}

// mapHermesUsage maps a source session's usage rows, keyed as both stores
// key them: (model, task, billing route). Hermes keeps a row per route and
// so does sessiondb: each route is its own row. Rows of one key (a legacy
// file whose primary key had no task or route) are summed into one.
func mapHermesUsage(rows []hermesRow, sessionID string, started int64, lost tally) []store.ForeignUsage {
	type key struct{ model, task, provider, baseURL, mode string }
	var order []key
	by := map[key]*store.ForeignUsage{}
	for _, r := range rows {
		unmapped(lost, "session_model_usage", r, hermesUsageMapped, nil)
		k := key{r.str("model"), r.str("task"), r.str("billing_provider"), r.str("billing_base_url"), r.str("billing_mode")}
		first, last := r.millis("first_seen"), r.millis("last_seen")
		if first == nil {
			first = &started
		}
		if last == nil {
			last = first
		}
		p, seen := by[k]
		if !seen {
			p = &store.ForeignUsage{SessionID: sessionID, Model: k.model, Task: k.task,
				FirstSeenAt: *first, LastSeenAt: *last,
				BillingProvider: k.provider, BillingBaseUrl: k.baseURL, BillingMode: k.mode,
				CostStatus: rules.Ptr(r.str("cost_status")), CostSource: rules.Ptr(r.str("cost_source"))}
			by[k] = p
			order = append(order, k)
		} else {
			p.FirstSeenAt, p.LastSeenAt = min(p.FirstSeenAt, *first), max(p.LastSeenAt, *last)
		}
		p.InputTokens += nonNeg(r.int("input_tokens"))
		p.OutputTokens += nonNeg(r.int("output_tokens"))
		p.CacheReadTokens += nonNeg(r.int("cache_read_tokens"))
		p.CacheWriteTokens += nonNeg(r.int("cache_write_tokens"))
		p.ReasoningTokens += nonNeg(r.int("reasoning_tokens"))
		p.ApiCallCount += nonNeg(r.int("api_call_count"))
		p.EstimatedCostUsd += cost(r.float("estimated_cost_usd"))
		p.ActualCostUsd += cost(r.float("actual_cost_usd"))
	}
	out := make([]store.ForeignUsage, len(order))
	for i, k := range order {
		out[i] = *by[k]
	}
	return out
}

func nonNeg(n int64) int64 { return max(n, 0) }

// cost keeps a plausible dollar figure — finite, between 0 and
// store.MaxUsageCostUSD, as RecordUsage insists — and 0 otherwise, as the
// reference store's own gate turns an implausible estimate into 0.
func cost(f float64) float64 {
	if (store.Usage{EstimatedCostUSD: f}).Validate() != nil {
		return 0
	}
	return f
}

// hermesMetaKey maps a state_meta key, or "" for Hermes's own keys.
func hermesMetaKey(k string) string {
	if hermesMetaInternal[k] || strings.HasPrefix(k, "fts_") {
		return ""
	}
	return hermesMetaPrefix + k
}
