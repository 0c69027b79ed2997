package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
		TokenCount: 12, Summary: true, IdempotencyKey: "k", ReasoningDetails: `{"signature": "s"}`,
		Parts: []Part{{Type: PartText, Text: "c\u00e9 \U0001F600"}, {Type: PartToolUse, ToolCallID: "1", Name: "f", Input: "{}"}},
		Model: "m", Metadata: `{"a": 1}`, PlatformMessageID: "p"}
	if _, err := s.AppendMessage(ctx, "s", in); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Messages(ctx, "s", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.IdempotencyKey, want.PlatformMessageID = "", ""
	// Identity is kept: the message's UID and its calls'.
	want.UID, want.ToolCalls = ms[0].UID, slices.Clone(in.ToolCalls)
	want.ToolCalls[0].UID = ms[0].ToolCalls[0].UID
	if want.UID == "" || want.ToolCalls[0].UID == "" {
		t.Errorf("stored message lacks its UIDs: %+v", ms[0])
	}
	if diff := cmp.Diff(want, ms[0].AsNew()); diff != "" {
		t.Errorf("AsNew (-want +got):\n%s", diff)
	}
	ms[0].AsNew().ToolCalls[0].Name = "changed"
	ms[0].AsNew().Parts[0].Text = "changed"
	if ms[0].ToolCalls[0].Name != "f" || ms[0].Parts[0].Text != in.Parts[0].Text {
		t.Error("AsNew shares the tool calls or parts slice with the message")
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

func testCompactKeepingLast(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	gatewayTurns(t, s, "g")
	h := NewHolder("gateway")
	var replaced []string
	res, err := s.CompactKeepingLast(ctx, "g", h, KeepPolicy{Turns: 2}, func(ctx context.Context, ms []Message) (string, error) {
		for _, m := range ms {
			replaced = append(replaced, m.Content)
		}
		// The lock is held while summarising; an append lands meanwhile.
		if l, _ := s.CompressionLock(ctx, "g"); l.Holder != h {
			t.Errorf("lock during summarize: %+v, want held by %s", l, h)
		}
		if _, err := s.AppendMessage(ctx, "g", NewMessage{Role: RoleUser, Content: "late"}); err != nil {
			t.Error(err)
		}
		return "asked q1, answered a1", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"q1", "a1"}, replaced); diff != "" {
		t.Errorf("summarizer saw (-want +got):\n%s", diff)
	}
	want := []string{"summary:asked q1, answered a1", "user:q2", "assistant:>grep", "tool:hits", "assistant:a2",
		"user:q3", "assistant:a3", "user:late"}
	if diff := cmp.Diff(want, view(t, s, "g")); diff != "" {
		t.Errorf("conversation after compaction (-want +got):\n%s", diff)
	}
	if res.Compacted != 2 || len(res.IDs) != 1 || len(res.Carried) != 7 {
		t.Errorf("result %+v: want 2 compacted, 1 summary, 7 carried", res)
	}
	if l, _ := s.CompressionLock(ctx, "g"); l.Live(time.Now()) {
		t.Errorf("lock left after the call: %+v", l)
	}
	// The kept turns are the same turns: one each in the lineage view, and
	// a retried append of a kept row still answers with its (moved) key.
	all, _ := s.Conversation(ctx, "g", ConversationOptions{Lineage: true})
	if len(all) != 10 {
		t.Errorf("lineage view has %d rows, want 10 (9 turns and the summary, each once)", len(all))
	}
	id, err := s.AppendMessage(ctx, "g", NewMessage{Role: RoleUser, Content: "q3", TokenCount: 5, IdempotencyKey: "q3"})
	if err != nil || !containsID(res.Carried, id) {
		t.Errorf("retried kept append = %d, %v; want its carried copy", id, err)
	}

	// By budget, on what is there now: the newest rows worth 20 tokens,
	// which stop short of the 55-token tool exchange (never split).
	res, err = s.CompactKeepingLast(ctx, "g", h, KeepPolicy{TokenBudget: 20}, func(_ context.Context, ms []Message) (string, error) {
		return fmt.Sprintf("%d rows", len(ms)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"summary:4 rows", "assistant:a2", "user:q3", "assistant:a3", "user:late"}
	if diff := cmp.Diff(want, view(t, s, "g")); diff != "" {
		t.Errorf("after a budget compaction (-want +got):\n%s", diff)
	}
}

func testCompactKeepingLast_WritesNothingWhenItCannot(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	gatewayTurns(t, s, "g")
	before := view(t, s, "g")
	called := false
	summarize := func(context.Context, []Message) (string, error) { called = true; return "sum", nil }
	h := NewHolder("gateway")

	// Nothing to replace: the policy keeps it all.
	res, err := s.CompactKeepingLast(ctx, "g", h, KeepPolicy{Turns: 3}, summarize)
	if err != nil || called || !cmp.Equal(res, CompactResult{}, cmpopts.EquateEmpty()) {
		t.Errorf("nothing to replace: %+v, %v, summarizer called %v", res, err, called)
	}
	// Another compressor holds the lock.
	other := LockFor(t, s, "g")
	_, err = s.CompactKeepingLast(ctx, "g", h, KeepPolicy{Turns: 1}, summarize)
	if !errors.Is(err, ErrLeaseHeld) || !strings.Contains(err.Error(), other) || called {
		t.Errorf("lock held by another: %v (summarizer called %v), want ErrLeaseHeld naming %s", err, called, other)
	}
	if _, err := s.ReleaseCompressionLock(ctx, "g", other); err != nil {
		t.Fatal(err)
	}
	// The summarizer fails: its error, nothing written, the lock given back.
	boom := errors.New("model unavailable")
	_, err = s.CompactKeepingLast(ctx, "g", h, KeepPolicy{Turns: 1}, func(context.Context, []Message) (string, error) { return "", boom })
	if !errors.Is(err, boom) {
		t.Errorf("failing summarizer: %v, want its error", err)
	}
	_, err = s.CompactKeepingLast(ctx, "g", h, KeepPolicy{Turns: 1}, func(context.Context, []Message) (string, error) { return "", nil })
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty summary: %v, want ErrInvalidInput", err)
	}
	if diff := cmp.Diff(before, view(t, s, "g")); diff != "" {
		t.Errorf("a refused compaction changed the conversation (-before +after):\n%s", diff)
	}
	if l, _ := s.CompressionLock(ctx, "g"); l.Live(time.Now()) {
		t.Errorf("lock left after failures: %+v", l)
	}
	// Bad arguments.
	for name, call := range map[string]func() error{
		"zero policy": func() error { _, err := s.CompactKeepingLast(ctx, "g", h, KeepPolicy{}, summarize); return err },
		"negative turns": func() error {
			_, err := s.CompactKeepingLast(ctx, "g", h, KeepPolicy{Turns: -1}, summarize)
			return err
		},
		"nil summarizer": func() error { _, err := s.CompactKeepingLast(ctx, "g", h, KeepPolicy{Turns: 1}, nil); return err },
		"empty holder": func() error {
			_, err := s.CompactKeepingLast(ctx, "g", "", KeepPolicy{Turns: 1}, summarize)
			return err
		},
		"unknown session": func() error {
			_, err := s.CompactKeepingLast(ctx, "nope", h, KeepPolicy{Turns: 1}, summarize)
			return err
		},
	} {
		want := ErrInvalidInput
		if name == "unknown session" {
			want = ErrNotFound
		}
		if err := call(); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	if called {
		t.Error("the summarizer ran for a refused call")
	}
}

func testCompactKeepingLast_KeepsACallersOwnLockAndRefusesAContinuedSession(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	gatewayTurns(t, s, "g")
	h := LockFor(t, s, "g")
	sum := func(context.Context, []Message) (string, error) { return "sum", nil }
	if _, err := s.CompactKeepingLast(ctx, "g", h, KeepPolicy{Turns: 1}, sum); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.CompressionLock(ctx, "g"); l.Holder != h || !l.Live(time.Now()) {
		t.Errorf("the caller's own lock was released: %+v", l)
	}
	if _, err := s.ReleaseCompressionLock(ctx, "g", h); err != nil {
		t.Fatal(err)
	}
	compressInto(t, s, "g", "g2")
	_, err := s.CompactKeepingLast(ctx, "g", NewHolder("x"), KeepPolicy{Turns: 1}, func(context.Context, []Message) (string, error) {
		t.Error("summarizer called for a continued session")
		return "sum", nil
	})
	var cont *ContinuedError
	if !errors.As(err, &cont) || cont.ChildID != "g2" {
		t.Errorf("continued session: %v, want a *ContinuedError naming g2", err)
	}
}
