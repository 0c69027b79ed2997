package storetest

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// row builds a message for the pure cut tests: "u" user, "a" assistant,
// "a>x,y" assistant calling x and y, "t<x" the result of call x, "s" system.
func row(spec string, tokens int64) Message {
	m := Message{TokenCount: tokens, Content: spec}
	switch {
	case spec == "u":
		m.Role = RoleUser
	case spec == "s":
		m.Role = RoleSystem
	case strings.HasPrefix(spec, "a>"):
		m.Role = RoleAssistant
		for _, id := range strings.Split(spec[2:], ",") {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: "f"})
		}
	case strings.HasPrefix(spec, "t<"):
		m.Role, m.ToolCallID = RoleTool, spec[2:]
	default:
		m.Role = RoleAssistant
	}
	return m
}

func rows(specs ...string) []Message {
	out := make([]Message, len(specs))
	for i, s := range specs {
		out[i] = row(s, 10)
	}
	return out
}

func testAsNew_RoundTrips(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	in := NewMessage{Role: RoleAssistant, Content: "c\u00e9 \U0001F600", ToolName: "n", ToolCallID: "id",
		ToolCalls: []ToolCall{{ID: "1", Name: "f", Arguments: "{}"}}, Reasoning: "r", FinishReason: "stop",
		TokenCount: 12, Summary: true, IdempotencyKey: "k"}
	if _, err := s.AppendMessage(ctx, "s", in); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Messages(ctx, "s", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.IdempotencyKey = ""
	if diff := cmp.Diff(want, ms[0].AsNew()); diff != "" {
		t.Errorf("AsNew (-want +got):\n%s", diff)
	}
	ms[0].AsNew().ToolCalls[0].Name = "changed"
	if ms[0].ToolCalls[0].Name != "f" {
		t.Error("AsNew shares the tool calls slice with the message")
	}
}

// gatewayTurns fills a session with three turns, the middle one with a
// tool exchange, and returns the ids.
func gatewayTurns(t *testing.T, s *Store, id string) []int64 {
	t.Helper()
	newTestSession(t, s, id)
	ids, err := s.AppendMessages(t.Context(), id, []NewMessage{
		{Role: RoleUser, Content: "q1", TokenCount: 5},
		{Role: RoleAssistant, Content: "a1", TokenCount: 5},
		{Role: RoleUser, Content: "q2", TokenCount: 5},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "grep", Arguments: "{}"}}, TokenCount: 5},
		{Role: RoleTool, ToolCallID: "c1", ToolName: "grep", Content: "hits", TokenCount: 50},
		{Role: RoleAssistant, Content: "a2", TokenCount: 5},
		{Role: RoleUser, Content: "q3", TokenCount: 5, IdempotencyKey: "q3"},
		{Role: RoleAssistant, Content: "a3", TokenCount: 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// view lists the active conversation as "role:content" (a tool call as
// "assistant:>name", a summary as "summary:text").
func view(t *testing.T, s *Store, id string) []string {
	t.Helper()
	ms, err := s.Conversation(t.Context(), id, ConversationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		switch {
		case m.Summary:
			out = append(out, "summary:"+m.Content)
		case len(m.ToolCalls) > 0:
			out = append(out, "assistant:>"+m.ToolCalls[0].Name)
		default:
			out = append(out, fmt.Sprintf("%s:%s", m.Role, m.Content))
		}
	}
	return out
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
