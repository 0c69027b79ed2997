package eino_test

import (
	"errors"
	"testing"

	"github.com/cloudwego/eino/schema"
	"github.com/google/go-cmp/cmp"

	einoconv "github.com/sessiondb/sessiondb/convert/eino"
	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

// An agent's turn as eino builds it: a system prompt, the user, the model
// thinking and calling two tools, their results, the answer.
func turn() []*schema.Message {
	return []*schema.Message{
		schema.SystemMessage("You are a careful coding agent."),
		schema.UserMessage("Why does TestCheckout fail? 谢谢\x00"),
		{Role: schema.Assistant, ReasoningContent: "The total is summed from a map.",
			ToolCalls: []schema.ToolCall{
				{ID: "call_1", Type: "function", Function: schema.FunctionCall{Name: "shell", Arguments: `{"cmd":"go test ./checkout"}`}},
				{ID: "call_2", Type: "function", Function: schema.FunctionCall{Name: "read_file", Arguments: `{"path":"total.go"}`}},
			},
			ResponseMeta: &schema.ResponseMeta{FinishReason: "tool_calls"}},
		schema.ToolMessage("--- FAIL: TestCheckout", "call_1", schema.WithToolName("shell")),
		schema.ToolMessage("func Total(items map[string]float64) float64 {...}", "call_2", schema.WithToolName("read_file")),
		{Role: schema.Assistant, Content: "Sum integer cents instead.", ResponseMeta: &schema.ResponseMeta{FinishReason: "stop"},
			Extra: map[string]any{"trace_id": "t-42", "attempt": float64(2)}},
	}
}

// TestRoundTripThroughAStore: eino → sessiondb (a real store) → eino gives
// back what was sent, and the store searches the tool results.
func TestRoundTripThroughAStore(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, "")
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "s1", Source: "eino"}); err != nil {
		t.Fatal(err)
	}
	in := turn()
	msgs, err := einoconv.ToStore(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, "s1", msgs); err != nil {
		t.Fatal(err)
	}
	stored, err := s.Messages(ctx, "s1", db.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := einoconv.FromStore(stored)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-sent +got):\n%s", diff)
	}
	if stored[2].ToolCalls[1].Name != "read_file" || stored[3].ToolName != "shell" || stored[5].Metadata != `{"attempt":2,"trace_id":"t-42"}` {
		t.Errorf("stored shape: %+v", stored)
	}
	hits, err := s.Search(ctx, "TestCheckout", db.SearchOptions{Roles: []db.Role{db.RoleTool}})
	if err != nil || len(hits) != 1 || hits[0].MessageID != stored[3].ID {
		t.Errorf("search of the tool result: %+v, %v", hits, err)
	}
}

// TestRefused: what the store has no place for is an *UnsupportedError
// naming the message and the field, matching ErrInvalidInput; nothing is
// converted.
func TestRefused(t *testing.T) {
	idx := 0
	for _, tc := range []struct {
		name  string
		msg   *schema.Message
		field string
	}{
		{"nil", nil, "nil"},
		{"name", &schema.Message{Role: schema.User, Content: "hi", Name: "alice"}, "name"},
		{"image", &schema.Message{Role: schema.User, UserInputMultiContent: []schema.MessageInputPart{{Type: schema.ChatMessagePartTypeText, Text: "hi"}}}, "user_input_multi_content"},
		{"usage", &schema.Message{Role: schema.Assistant, Content: "hi", ResponseMeta: &schema.ResponseMeta{Usage: &schema.TokenUsage{PromptTokens: 3}}}, "response_meta.usage"},
		{"stream chunk", &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{Index: &idx, ID: "c", Function: schema.FunctionCall{Name: "f"}}}}, "tool_calls[0].index"},
		{"tool call extra", &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{ID: "c", Function: schema.FunctionCall{Name: "f"}, Extra: map[string]any{"x": 1}}}}, "tool_calls[0].extra"},
	} {
		got, err := einoconv.ToStore([]*schema.Message{schema.UserMessage("fine"), tc.msg})
		var u *einoconv.UnsupportedError
		if !errors.As(err, &u) || u.Message != 1 || u.Field != tc.field || !errors.Is(err, store.ErrInvalidInput) || got != nil {
			t.Errorf("%s: %v, %v; want an UnsupportedError for message 1, %s", tc.name, got, err, tc.field)
		}
	}
	// What the store refuses itself (an unknown role) is its own error.
	if _, err := einoconv.ToStore([]*schema.Message{{Role: "robot", Content: "x"}}); !errors.Is(err, store.ErrInvalidInput) {
		t.Errorf("unknown role: %v, want ErrInvalidInput", err)
	}
	// A note is kept with its session but never handed to a model.
	if out, err := einoconv.FromStore([]store.Message{{Role: store.RoleNote, Content: "remember"}, {Role: store.RoleUser, Content: "hi"}}); err != nil ||
		len(out) != 1 || out[0].Content != "hi" {
		t.Errorf("FromStore with a note: %+v %v, want the user message alone", out, err)
	}
	// A stored image has no eino form here yet.
	stored := []store.Message{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartImage, URL: "https://x/a.png"}}}}
	var u *einoconv.UnsupportedError
	if _, err := einoconv.FromStore(stored); !errors.As(err, &u) || u.Field != "parts" {
		t.Errorf("FromStore of an image: %v, want an UnsupportedError for its parts", err)
	}
}

// TestUsageOf: a model response's usage, recorded on the session, is what
// the store reports.
func TestUsageOf(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, "")
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	m := &schema.Message{Role: schema.Assistant, Content: "done", ResponseMeta: &schema.ResponseMeta{FinishReason: "stop",
		Usage: &schema.TokenUsage{PromptTokens: 120, CompletionTokens: 40, PromptTokenDetails: schema.PromptTokenDetails{CachedTokens: 100},
			CompletionTokensDetails: schema.CompletionTokensDetails{ReasoningTokens: 8}}}}
	if err := s.RecordUsage(ctx, "s1", einoconv.UsageOf(m, "gpt-5")); err != nil {
		t.Fatal(err)
	}
	total, models, err := s.SessionUsage(ctx, "s1")
	want := db.Usage{InputTokens: 120, OutputTokens: 40, CacheReadTokens: 100, ReasoningTokens: 8, APICalls: 1}
	if err != nil || total != want || len(models) != 1 || models[0].Model != "gpt-5" {
		t.Errorf("usage: %+v %+v %v; want %+v under gpt-5", total, models, err, want)
	}
}
