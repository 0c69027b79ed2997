package storetest

// Helpers the engines' own tests share with the suite: each builds
// state through the API of package store alone.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/sessiondb/sessiondb/store"
)

// AppendTexts appends user messages with the given contents and returns
// their ids.
func AppendTexts(t testing.TB, s *Store, sessionID string, texts ...string) []int64 {
	t.Helper()
	ms := make([]NewMessage, len(texts))
	for i, c := range texts {
		ms[i] = NewMessage{Role: RoleUser, Content: c}
	}
	ids, err := s.AppendMessages(t.Context(), sessionID, ms)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	return ids
}

// LockFor takes the compression lock of sessionID for a new holder and
// returns the holder.
func LockFor(t testing.TB, s *Store, sessionID string) string {
	t.Helper()
	h := NewHolder("compressor")
	if _, got, err := s.AcquireCompressionLock(t.Context(), sessionID, h, 0); err != nil || !got {
		t.Fatalf("lock: %v %v", got, err)
	}
	return h
}

// FillRich builds a store that uses every part of the domain an
// export carries: lineage through compression (with copies that name
// their origins), compaction, rewind, tool calls, titles of every rank,
// usage, flags and non-Latin text.
func FillRich(t testing.TB, s *Store) {
	t.Helper()
	ctx := t.Context()
	MustCreate(t, s, NewSession{ID: "root", Source: "cli", Model: "m1", Cwd: "/w", Title: "Trip", SystemPrompt: "be brief",
		ModelConfig: `{"temperature":0.2}`, UserID: "u1"})
	if _, err := s.AppendMessages(ctx, "root", []NewMessage{
		{Role: RoleUser, Content: "plan a trip to 京都", IdempotencyKey: "k1"},
		{Role: RoleAssistant, Content: "checking", ToolCalls: []ToolCall{{ID: "c1", Name: "search", Arguments: `{"q":"kyoto"}`}},
			Reasoning: "need data", TokenCount: 12},
		{Role: RoleTool, ToolName: "search", ToolCallID: "c1", Content: "tool output\twith a tab", FinishReason: "stop"},
	}); err != nil {
		t.Fatal(err)
	}
	h := LockFor(t, s, "root")
	w, _ := s.ActiveWatermark(ctx, "root")
	AppendTexts(t, s, "root", "and hotels?")
	if _, err := s.CompactSession(ctx, "root", Compaction{Holder: h, Watermark: w,
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	w, _ = s.ActiveWatermark(ctx, "root")
	AppendTexts(t, s, "root", "late one")
	if _, err := s.PublishCompressionChild(ctx, "root", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "root-2"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "handoff", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	ids := AppendTexts(t, s, "root-2", "q", "r")
	if _, err := s.RewindTo(ctx, "root-2", ids[1], RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	MustCreate(t, s, NewSession{ID: "helper", ParentID: "root-2", Kind: ChildDelegate})
	s.SetAutoTitle(ctx, "helper", "Helper job", TitleGenerated)
	s.RecordUsage(ctx, "root-2", UsageUpdate{Model: "m1", Usage: Usage{InputTokens: 100, OutputTokens: 7, APICalls: 1, EstimatedCostUSD: 0.0125}})
	s.RecordUsage(ctx, "root-2", UsageUpdate{Model: "m2", Task: "title", Usage: Usage{InputTokens: 3, APICalls: 1}})
	s.SetPinned(ctx, "root", true)
	s.MarkRead(ctx, "helper", false)
	s.EndSession(ctx, "helper", "done")
}

// MustCreate creates a session or fails the test.
func MustCreate(t testing.TB, s *Store, n NewSession) Session {
	t.Helper()
	if n.Source == "" {
		n.Source = "test"
	}
	sess, err := s.CreateSession(t.Context(), n)
	if err != nil {
		t.Fatalf("CreateSession(%q): %v", n.ID, err)
	}
	return sess
}

// TitleOf returns a session's title and rank.
func TitleOf(t *testing.T, s *Store, id string) (string, TitleRank) {
	t.Helper()
	sess, err := s.Session(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sess.Title, sess.TitleRank
}

func RecentIDs(t *testing.T, s *Store, q RecentQuery) []string {
	t.Helper()
	var ids []string
	for sum, err := range s.AllRecentSessions(t.Context(), q) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sum.ID)
	}
	return ids
}

// Tick lets the store's millisecond clock move on, so that what happens
// next is later than what came before.
func Tick() { time.Sleep(3 * time.Millisecond) }

func testRecentSessions_ByLastActivityWithPreview(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	for _, id := range []string{"old", "mid", "new"} {
		MustCreate(t, s, NewSession{ID: id, Source: "cli", Model: "m-" + id})
		Tick()
	}
	if _, err := s.AppendMessages(ctx, "old", []NewMessage{
		{Role: RoleSystem, Content: "you are helpful"},
		{Role: RoleUser, Content: "  Why does\n\tthe build\u200b fail " + strings.Repeat("again and ", 10)},
		{Role: RoleUser, Content: "second question"},
	}); err != nil {
		t.Fatal(err)
	}
	page, err := s.RecentSessions(ctx, RecentQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"old", "new", "mid"}, idsOf(page.Sessions)); diff != "" || page.Next != "" {
		t.Fatalf("order by last activity (-want +got):\n%s next %q", diff, page.Next)
	}
	top := page.Sessions[0]
	wantPreview := "Why does the build fail again and again and again and again…"
	if top.Preview != wantPreview || top.MessageCount != 3 || top.Model != "m-old" || top.Source != "cli" {
		t.Errorf("top = %+v\nwant preview %q", top, wantPreview)
	}
	if !top.LastActiveAt.After(page.Sessions[1].StartedAt) || !page.Sessions[1].LastActiveAt.Equal(page.Sessions[1].StartedAt) {
		t.Errorf("last active: %v (top), %v vs started %v (a session without messages)", top.LastActiveAt,
			page.Sessions[1].LastActiveAt, page.Sessions[1].StartedAt)
	}
}

// Contents lists a session's messages as "state:content" in id order.
func Contents(t *testing.T, s *Store, sessionID string) []string {
	t.Helper()
	ms, err := s.Messages(t.Context(), sessionID, MessageQuery{IncludeRewound: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s:%s", m.State, m.Content))
	}
	return out
}

// SessionLine is an export line for a bare session (with its parent and
// kind when parent is set).
func SessionLine(id, parent, kind string) string {
	p := ""
	if parent != "" {
		p = fmt.Sprintf(`,"parent_session_id":%q,"kind":%q`, parent, kind)
	}
	return fmt.Sprintf(`{"type":"session","id":%q,"source":"t"%s,"started_at":1,"title_rank":0,"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"api_call_count":0,"estimated_cost_usd":0,"actual_cost_usd":0,"archived":false,"pinned":false,"hidden":false,"rewind_count":0}`+"\n", id, p)
}

// MessageLine is an export line for a user message.
func MessageLine(sid string, seq int, content string) string {
	return fmt.Sprintf(`{"type":"message","session_id":%q,"seq":%d,"role":"user","content":%q,"state":"active","created_at":1}`+"\n", sid, seq, content)
}

// ExportHeader is the first line of every export.
const ExportHeader = `{"type":"header","format":"sessiondb-export","version":1}` + "\n"
