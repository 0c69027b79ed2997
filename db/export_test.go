package db

import (
	"testing"
)

// fillRichStore builds a store that uses every part of the domain an
// export carries: lineage through compression (with copies that name
// their origins), compaction, rewind, tool calls, titles of every rank,
// usage, flags, NUL bytes and non-Latin text.
func fillRichStore(t testing.TB, s *Store) {
	t.Helper()
	ctx := t.Context()
	mustCreate(t, s, NewSession{ID: "root", Source: "cli", Model: "m1", Cwd: "/w", Title: "Trip", SystemPrompt: "be brief",
		ModelConfig: `{"temperature":0.2}`, UserID: "u1"})
	if _, err := s.AppendMessages(ctx, "root", []NewMessage{
		{Role: RoleUser, Content: "plan a trip to 京都", IdempotencyKey: "k1"},
		{Role: RoleAssistant, Content: "checking", ToolCalls: []ToolCall{{ID: "c1", Name: "search", Arguments: `{"q":"kyoto"}`}},
			Reasoning: "need data", TokenCount: 12},
		{Role: RoleTool, ToolName: "search", ToolCallID: "c1", Content: "nul\x00inside", FinishReason: "stop"},
	}); err != nil {
		t.Fatal(err)
	}
	h := lockFor(t, s, "root")
	w, _ := s.ActiveWatermark(ctx, "root")
	appendTexts(t, s, "root", "and hotels?")
	if _, err := s.CompactSession(ctx, "root", Compaction{Holder: h, Watermark: w,
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	w, _ = s.ActiveWatermark(ctx, "root")
	appendTexts(t, s, "root", "late one")
	if _, err := s.PublishCompressionChild(ctx, "root", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "root-2"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "handoff", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	ids := appendTexts(t, s, "root-2", "q", "r")
	if _, err := s.RewindTo(ctx, "root-2", ids[1], RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, NewSession{ID: "helper", ParentID: "root-2", Kind: ChildDelegate})
	s.SetAutoTitle(ctx, "helper", "Helper job", TitleGenerated)
	s.RecordUsage(ctx, "root-2", UsageUpdate{Model: "m1", Usage: Usage{InputTokens: 100, OutputTokens: 7, APICalls: 1, EstimatedCostUSD: 0.0125}})
	s.RecordUsage(ctx, "root-2", UsageUpdate{Model: "m2", Task: "title", Usage: Usage{InputTokens: 3, APICalls: 1}})
	s.SetPinned(ctx, "root", true)
	s.MarkRead(ctx, "helper", false)
	s.EndSession(ctx, "helper", "done")
}
