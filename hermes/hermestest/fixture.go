package hermestest

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessiondb/sessiondb/hermes"
	. "github.com/sessiondb/sessiondb/store"
)

// hermesReport is the part of reference-report.json the test reads: what
// Hermes's own store returns for the fixture file.
type hermesReport struct {
	ExportAll          []map[string]any                            `json:"export_all"`
	Lineage            map[string][]string                         `json:"lineage"`
	Titles             map[string]*string                          `json:"titles"`
	ConversationActive map[string][]struct{ Role, Content string } `json:"conversation_active"`
	Search             map[string][]struct {
		SessionID string `json:"session_id"`
		Snippet   string `json:"snippet"`
	} `json:"search"`
	Handoff map[string]struct {
		State    string  `json:"state"`
		Platform string  `json:"platform"`
		Error    *string `json:"error"`
	} `json:"handoff"`
}

// refString reads a JSON string-or-null field as "" for null.
func refString(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func refInt(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

func refFloat(m map[string]any, k string) float64 {
	f, _ := m[k].(float64)
	return f
}

func refTime(m map[string]any, k string) time.Time {
	f, ok := m[k].(float64)
	if !ok {
		return time.Time{}
	}
	return time.UnixMilli(int64(math.Round(f * 1000))).UTC()
}

func testImportHermesFixture(t *testing.T, e Engine) {
	dir := e.fixtureInPlace(t)
	ctx := t.Context()
	var ref hermesReport
	raw, err := os.ReadFile(filepath.Join(dir, "reference-report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	srcFiles := []string{filepath.Join(dir, "state.db"), filepath.Join(dir, "state.db-wal")}
	before := fileHashes(t, srcFiles...)

	s := e.Open(t)
	res, err := hermes.Import(ctx, s, filepath.Join(dir, "state.db"), hermes.Options{})
	if err != nil {
		t.Fatalf("ImportHermes: %v", err)
	}
	if diff := cmp.Diff(before, fileHashes(t, srcFiles...)); diff != "" {
		t.Errorf("the import changed the source file or its WAL (-before +after):\n%s", diff)
	}
	t.Logf("imported %d sessions, %d messages, %d usage rows, %d meta; not representable %v",
		res.Imported, res.Messages, res.Usage, res.Meta, res.NotRepresentable)

	// What the file holds, counted from the file itself.
	src := filepath.Join(dir, "state.db")
	nSessions := count(t, src, "SELECT COUNT(*) FROM sessions")
	nMessages := count(t, src, "SELECT COUNT(*) FROM messages")
	nRewound := count(t, src, "SELECT COUNT(*) FROM messages WHERE active = 0 AND compacted = 0")
	nCompacted := count(t, src, "SELECT COUNT(*) FROM messages WHERE active = 0 AND compacted = 1")
	if int64(len(ref.ExportAll)) != nSessions {
		t.Fatalf("reference lists %d sessions, the file holds %d", len(ref.ExportAll), nSessions)
	}
	wantRes := hermes.Result{Imported: int(nSessions), Messages: nMessages, Usage: 2, Meta: 1,
		NotRepresentable: map[string]int64{}, RefusedMessages: map[string]int64{}, Source: filepath.Join(dir, "state.db")}
	if diff := cmp.Diff(wantRes, res); diff != "" {
		t.Errorf("import result (-want +got):\n%s", diff)
	}

	var active, rewound, compacted int64
	started := map[string]time.Time{} // each reference session's start, for its continuations
	for _, rs := range ref.ExportAll {
		started[refString(rs, "id")] = refTime(rs, "started_at")
	}
	for _, rs := range ref.ExportAll {
		id := refString(rs, "id")
		t.Run(id, func(t *testing.T) {
			got, err := s.Session(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			refMsgs, _ := rs["messages"].([]any)
			want := Session{
				ID: id, Source: refString(rs, "source"), ParentID: refString(rs, "parent_session_id"),
				UserID: refString(rs, "user_id"), Model: refString(rs, "model"),
				ModelConfig: refString(rs, "model_config"), SystemPrompt: refString(rs, "system_prompt"),
				Cwd: refString(rs, "cwd"), Title: refString(rs, "title"),
				StartedAt: refTime(rs, "started_at"), EndedAt: refTime(rs, "ended_at"),
				EndReason: refString(rs, "end_reason"), Archived: refInt(rs, "archived") != 0,
				RewindCount: refInt(rs, "rewind_count"),
				// sessiondb counts the live (active) rows: the export's.
				MessageCount: int64(len(refMsgs)), ToolCallCount: refInt(rs, "tool_call_count"),
				Usage: Usage{InputTokens: refInt(rs, "input_tokens"), OutputTokens: refInt(rs, "output_tokens"),
					CacheReadTokens: refInt(rs, "cache_read_tokens"), CacheWriteTokens: refInt(rs, "cache_write_tokens"),
					ReasoningTokens: refInt(rs, "reasoning_tokens"), APICalls: refInt(rs, "api_call_count"),
					EstimatedCostUSD: refFloat(rs, "estimated_cost_usd"), ActualCostUSD: refFloat(rs, "actual_cost_usd")},
				GitBranch: refString(rs, "git_branch"), GitRepoRoot: refString(rs, "git_repo_root"),
				Billing: Billing{Provider: refString(rs, "billing_provider"), BaseURL: refString(rs, "billing_base_url"),
					Mode: refString(rs, "billing_mode"), CostStatus: refString(rs, "cost_status"),
					CostSource: refString(rs, "cost_source"), PricingVersion: refString(rs, "pricing_version")},
				Routing: Routing{SessionKey: refString(rs, "session_key"), ChatID: refString(rs, "chat_id"),
					ChatType: refString(rs, "chat_type"), ThreadID: refString(rs, "thread_id"),
					DisplayName: refString(rs, "display_name"), OriginJSON: refString(rs, "origin_json")},
				CompressionRetryAfter:     refTime(rs, "compression_failure_cooldown_until"),
				CompressionError:          refString(rs, "compression_failure_error"),
				CompressionFallbackStreak: refInt(rs, "compression_fallback_streak"),
			}
			want.RootStartedAt = want.StartedAt
			if want.Title != "" {
				want.TitleRank = TitleUser // Hermes counts a title without a source as the user's
			}
			// The fixture's children: a sub-agent, and a continuation of a
			// session ended by compression.
			switch {
			case want.ParentID == "":
			case want.Source == "subagent":
				want.Kind = ChildDelegate
				want.DelegatedFrom = want.ParentID
			default:
				want.Kind = ChildCompression
				want.RootStartedAt = started[want.ParentID] // the fixture's chains are one link long
			}
			// The display revision is sessiondb's own count of the
			// import's writes; the reference has none for a session. The
			// conversation's activity is derived (store's own tests).
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Session{}, "DisplayRevision", "ConversationActiveAt")); diff != "" {
				t.Errorf("session (-reference +sessiondb):\n%s", diff)
			}
			if hs := refString(rs, "handoff_state"); hs != "" {
				h, err := s.Handoff(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if h.State != HandoffStatus(hs) || h.Platform != refString(rs, "handoff_platform") || h.Error != refString(rs, "handoff_error") {
					t.Errorf("handoff = %+v, reference %s/%s", h, hs, refString(rs, "handoff_platform"))
				}
			}

			// Messages: the export lists the active rows, content byte-exact.
			conv, err := s.Conversation(ctx, id, ConversationOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(conv) != len(refMsgs) {
				t.Fatalf("%d active messages, reference %d", len(conv), len(refMsgs))
			}
			for i, rm := range refMsgs {
				m := rm.(map[string]any)
				wantMsg := Message{ID: conv[i].ID, SessionID: id, Role: Role(refString(m, "role")),
					Content: refString(m, "content"), ToolName: refString(m, "tool_name"),
					ToolCallID: refString(m, "tool_call_id"), Reasoning: refString(m, "reasoning"),
					FinishReason: refString(m, "finish_reason"), TokenCount: refInt(m, "token_count"),
					State: StateActive, IdempotencyKey: "hermes:" + jsonNumber(m["id"]),
					CreatedAt: refTime(m, "timestamp"), ReasoningDetails: refString(m, "reasoning_details"),
					PlatformMessageID: refString(m, "platform_message_id")}
				if calls, ok := m["tool_calls"].([]any); ok {
					for _, c := range calls {
						c := c.(map[string]any)
						fn := c["function"].(map[string]any)
						wantMsg.ToolCalls = append(wantMsg.ToolCalls, ToolCall{ID: refString(c, "id"),
							Name: refString(fn, "name"), Arguments: refString(fn, "arguments")})
					}
				}
				if len(conv[i].UID) != 32 {
					t.Errorf("message %d: UID %q", i, conv[i].UID)
				}
				if diff := cmp.Diff(wantMsg, conv[i], cmpopts.IgnoreFields(Message{}, "UID", "CallUID"), cmpopts.IgnoreFields(ToolCall{}, "UID")); diff != "" {
					t.Errorf("message %d (-reference +sessiondb):\n%s", i, diff)
				}
			}
			all, err := s.Messages(ctx, id, MessageQuery{IncludeRewound: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range all {
				switch m.State {
				case StateActive:
					active++
				case StateRewound:
					rewound++
				case StateCompacted:
					compacted++
				}
			}
		})
	}
	if active+rewound+compacted != nMessages || rewound != nRewound || compacted != nCompacted {
		t.Errorf("states: %d active, %d rewound, %d compacted; the file has %d messages, %d rewound, %d compacted",
			active, rewound, compacted, nMessages, nRewound, nCompacted)
	}

	for id, want := range ref.Lineage {
		lin, err := s.Lineage(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range lin {
			got = append(got, l.ID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("lineage of %s (-reference +sessiondb):\n%s", id, diff)
		}
	}
	for id, want := range ref.Titles {
		got, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if w := strOr(want); got.Title != w {
			t.Errorf("title of %s = %q, reference %q", id, got.Title, w)
		}
	}
	for id, want := range ref.ConversationActive {
		conv, err := s.Conversation(ctx, id, ConversationOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []struct{ Role, Content string }
		for _, m := range conv {
			got = append(got, struct{ Role, Content string }{string(m.Role), m.Content})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("active conversation of %s (-reference +sessiondb):\n%s", id, diff)
		}
	}
	for id, want := range ref.Handoff {
		h, err := s.Handoff(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if string(h.State) != want.State || h.Platform != want.Platform || h.Error != strOr(want.Error) {
			t.Errorf("handoff of %s = %+v, reference %+v", id, h, want)
		}
	}
	// Searches: each reference hit is resolved to its source message, and
	// sessiondb must find exactly those messages — a hit found only in a
	// tool call's arguments included (both stores index them).
	argsOnly := 0
	for q, want := range ref.Search {
		hits, err := s.Search(ctx, q, SearchOptions{Limit: MaxSearchLimit})
		if err != nil {
			t.Fatal(err)
		}
		wantKeys, inArgs := hermesHitMessages(t, filepath.Join(dir, "state.db"), q, want)
		if diff := cmp.Diff(wantKeys, searchHitMessages(t, s, hits)); diff != "" {
			t.Errorf("search %q finds other messages (-reference +sessiondb):\n%s", q, diff)
		}
		argsOnly += inArgs
	}
	if argsOnly == 0 {
		t.Error("no reference hit is only in a tool call's arguments: the fixture does not test them")
	}
	u, models, err := s.SessionUsage(ctx, "cli-20261101-a1")
	if err != nil {
		t.Fatal(err)
	}
	wantRoute := Billing{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1"}
	if len(models) != 1 || models[0].Model != "anthropic/claude-sonnet-4.5" || models[0].Usage != u || models[0].Billing != wantRoute {
		t.Errorf("usage of cli-20261101-a1 = %+v by model %+v, want one row routed %+v", u, models, wantRoute)
	}
	if v, err := s.Meta(ctx, "hermes/fixture_note"); err != nil || v != "written by hermes_state 306e2d23" {
		t.Errorf("meta hermes/fixture_note = %q, %v", v, err)
	}

	again, err := hermes.Import(ctx, s, filepath.Join(dir, "state.db"), hermes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !again.NothingNew() || again.Unchanged != int(nSessions) {
		t.Errorf("second import = %+v, want nothing new and %d unchanged", again, nSessions)
	}
	if diff := cmp.Diff(before, fileHashes(t, srcFiles...)); diff != "" {
		t.Errorf("the second import changed the source (-before +after):\n%s", diff)
	}
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// hermesHitMessages resolves reference hits to source messages (by the
// idempotency key the import gives them): the message of the hit's session
// whose indexed text (content, tool name, tool calls, as Hermes indexes
// them) contains the snippet; argsOnly counts those whose query terms
// occur only in the tool calls.
func hermesHitMessages(t *testing.T, path, q string, hits []struct {
	SessionID string `json:"session_id"`
	Snippet   string `json:"snippet"`
}) (keys []string, argsOnly int) {
	t.Helper()
	for _, h := range hits {
		rows := query(t, path, "SELECT id, content, tool_name, tool_calls FROM messages WHERE session_id = ? ORDER BY id", h.SessionID)
		var found []row
		for _, r := range rows {
			text := hitText(r.str("content") + " " + r.str("tool_name") + " " + r.str("tool_calls"))
			if strings.Contains(text, hitText(h.Snippet)) {
				found = append(found, r)
			}
		}
		if len(found) != 1 {
			t.Fatalf("reference hit %+v matches %d source messages", h, len(found))
		}
		r := found[0]
		if !strings.Contains(strings.ToLower(r.str("content")+" "+r.str("tool_name")), strings.ToLower(q)) {
			argsOnly++
		}
		keys = append(keys, h.SessionID+" "+"hermes:"+r.str("id"))
	}
	slices.Sort(keys)
	return keys, argsOnly
}

// searchHitMessages names sessiondb's hits as hermesHitMessages does.
func searchHitMessages(t *testing.T, s *Store, hits []SearchHit) []string {
	t.Helper()
	var out []string
	for _, h := range hits {
		ms, err := s.Messages(t.Context(), h.SessionID, MessageQuery{AfterID: h.MessageID - 1, Limit: 1})
		if err != nil || len(ms) != 1 {
			t.Fatalf("hit %d: %v", h.MessageID, err)
		}
		out = append(out, h.SessionID+" "+ms[0].IdempotencyKey)
	}
	slices.Sort(out)
	return out
}

func hitText(snippet string) string {
	r := strings.NewReplacer(">>>", "", "<<<", "", "...", "")
	return strings.Join(strings.Fields(r.Replace(snippet)), " ")
}
