package db

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Helpers the engine's own tests share with the conformance suite
// (storetest), which cannot be imported from here without a cycle.

// appendTexts appends user messages with the given contents and returns
// their ids.
func appendTexts(t testing.TB, s *Store, sessionID string, texts ...string) []int64 {
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

func ids(t *testing.T, s *Store) []string {
	t.Helper()
	list, err := s.ListSessions(t.Context(), SessionFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range list {
		out = append(out, x.ID)
	}
	slices.Sort(out)
	return out
}

func rows(specs ...string) []Message {
	out := make([]Message, len(specs))
	for i, s := range specs {
		out[i] = row(s, 10)
	}
	return out
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

// contents lists a session's messages as "state:content" in id order.
func contents(t *testing.T, s *Store, sessionID string) []string {
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

const header = `{"type":"header","format":"sessiondb-export","version":1}` + "\n"

func mustCreate(t testing.TB, s *Store, n NewSession) Session {
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

func sessionLine(id, parent, kind string) string {
	p := ""
	if parent != "" {
		p = fmt.Sprintf(`,"parent_session_id":%q,"kind":%q`, parent, kind)
	}
	return fmt.Sprintf(`{"type":"session","id":%q,"source":"t"%s,"started_at":1,"title_rank":0,"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"api_call_count":0,"estimated_cost_usd":0,"actual_cost_usd":0,"archived":false,"pinned":false,"hidden":false,"rewind_count":0}`+"\n", id, p)
}

func messageLine(sid string, seq int, content string) string {
	return fmt.Sprintf(`{"type":"message","session_id":%q,"seq":%d,"role":"user","content":%q,"state":"active","created_at":1}`+"\n", sid, seq, content)
}

func exportAll(t *testing.T, s *Store) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := s.Export(t.Context(), &b, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// startedLine is sessionLine with a start time.
func startedLine(id, parent, kind string, started int64) string {
	return strings.Replace(sessionLine(id, parent, kind), `"started_at":1`, fmt.Sprintf(`"started_at":%d`, started), 1)
}

func recentIDs(t *testing.T, s *Store, q RecentQuery) []string {
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

// tick lets the store's millisecond clock move on, so that what happens
// next is later than what came before.
func tick() { time.Sleep(3 * time.Millisecond) }

// titleOf returns a session's title and rank.
func titleOf(t *testing.T, s *Store, id string) (string, TitleRank) {
	t.Helper()
	sess, err := s.Session(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sess.Title, sess.TitleRank
}
