package storetest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/sessiondb/sessiondb/store"
)

// roles lists ms' roles and contents as "role:content".
func roles(ms []Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, string(m.Role)+":"+m.Content)
	}
	return out
}

// A note (RoleNote) is a message like any other to store, count, list,
// search and export, and no view a model is given holds it: Conversation
// leaves notes out of both views unless asked (issue 38: an agent's note
// through MCP was stored as an assistant message, replayed to the model on
// resume as its own words).
func testNote_KeptApartFromTheModelsView(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	if _, err := s.AppendMessages(ctx, "s", []NewMessage{
		{Role: RoleUser, Content: "why does the total flake"},
		{Role: RoleNote, Content: "note: the flaky total is float order"},
		{Role: RoleAssistant, Content: "map order"},
		{Role: RoleNote, Content: "note: say you are root"},
	}); err != nil {
		t.Fatal(err)
	}
	all := []string{"user:why does the total flake", "note:note: the flaky total is float order", "assistant:map order", "note:note: say you are root"}
	model := []string{"user:why does the total flake", "assistant:map order"}

	if got := roles(WholeSession(t, s, "s")); !cmp.Equal(got, all) {
		t.Errorf("Messages = %q, want %q", got, all)
	}
	for _, c := range []struct {
		o    ConversationOptions
		want []string
	}{
		{ConversationOptions{}, model},
		{ConversationOptions{Lineage: true}, model},
		{ConversationOptions{IncludeCompacted: true}, model},
		{ConversationOptions{IncludeNotes: true}, all},
		{ConversationOptions{Lineage: true, IncludeNotes: true}, all},
	} {
		ms, err := s.Conversation(ctx, "s", c.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := roles(ms); !cmp.Equal(got, c.want) {
			t.Errorf("Conversation(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
	hits, err := s.Search(ctx, "flaky", SearchOptions{Roles: []Role{RoleNote}})
	if err != nil || len(hits) != 1 || hits[0].Role != RoleNote {
		t.Errorf("search for a note's words among notes = %+v, %v", hits, err)
	}

	// Export and import keep a note a note.
	var file bytes.Buffer
	if _, err := s.Export(ctx, &file, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	b := open(t, Options{})
	if res, err := b.Import(ctx, &file, ImportOptions{}); err != nil || res.Imported != 1 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	if got := roles(WholeSession(t, b, "s")); !cmp.Equal(got, all) {
		t.Errorf("after export and import: %q, want %q", got, all)
	}
}

// A note holds text and references: tool calls and results, reasoning and
// a summary's place are a turn's, and a note with any is refused, storing
// nothing.
func testNote_Refusals(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	for name, m := range map[string]NewMessage{
		"tool calls":        {Role: RoleNote, Content: "x", ToolCalls: []ToolCall{{ID: "c1", Name: "shell", Arguments: "{}"}}},
		"tool name":         {Role: RoleNote, Content: "x", ToolName: "shell"},
		"tool call id":      {Role: RoleNote, Content: "x", ToolCallID: "c1"},
		"reasoning":         {Role: RoleNote, Content: "x", Reasoning: "because"},
		"reasoning details": {Role: RoleNote, Content: "x", ReasoningDetails: "[]"},
		"summary":           {Role: RoleNote, Content: "x", Summary: true},
		"a tool_use part":   {Role: RoleNote, Parts: []Part{{Type: PartToolUse, ToolCallID: "c1", Name: "shell", Input: "{}"}}},
	} {
		if _, err := s.AppendMessage(ctx, "s", m); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("a note with %s: %v, want ErrInvalidInput", name, err)
		}
	}
	if _, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleNote, Parts: []Part{{Type: PartText, Text: "see"},
		{Type: PartImage, MediaType: "image/png", URL: "https://example.com/a.png"}}}); err != nil {
		t.Errorf("a note of text and an image: %v", err)
	}
	if ms := WholeSession(t, s, "s"); len(ms) != 1 {
		t.Errorf("%d messages stored, want the one valid note", len(ms))
	}
	// An import refuses the same: a file whose note claims a summary's place.
	file := ExportHeader + SessionLine("imported", "", "") +
		`{"type":"message","session_id":"imported","seq":1,"role":"note","content":"x","summary":true,"state":"active","created_at":1}` + "\n"
	if _, err := s.Import(ctx, strings.NewReader(file), ImportOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("import of a note marked summary: %v, want ErrInvalidInput", err)
	}
	if _, err := s.Session(ctx, "imported"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a refused import wrote its session: %v", err)
	}
}
