package storetest

import (
	"errors"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignoreCreated = cmpopts.IgnoreFields(Message{}, "CreatedAt")

// ignoreUIDs leaves out of a comparison the identities the store mints
// (a message's UID, its calls' UIDs, a result's CallUID): the tests of
// identity check them; a round trip of content does not.
var ignoreUIDs = cmp.Options{cmpopts.IgnoreFields(Message{}, "UID", "CallUID"), cmpopts.IgnoreFields(ToolCall{}, "UID")}

func testAppendMessage_RoundTrip(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	in := []NewMessage{
		{Role: RoleUser, Content: "What is in /tmp?"},
		{Role: RoleAssistant, Content: "Let me look.", Reasoning: "ls is enough", TokenCount: 12,
			ToolCalls: []ToolCall{{ID: "c1", Name: "shell", Arguments: `{"cmd":"ls /tmp"}`}, {ID: "c2", Name: "stat", Arguments: `{}`}}},
		{Role: RoleTool, ToolName: "shell", ToolCallID: "c1", Content: "a.txt\nb.txt"},
		{Role: RoleAssistant, Content: "Two files.", FinishReason: "stop"},
	}
	var ids []int64
	for _, m := range in {
		id, err := s.AppendMessage(ctx, "s1", m)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	got, err := s.Messages(ctx, "s1", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var want []Message
	for i, m := range in {
		want = append(want, Message{ID: ids[i], SessionID: "s1", Role: m.Role, Content: m.Content,
			ToolName: m.ToolName, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls, Reasoning: m.Reasoning,
			FinishReason: m.FinishReason, TokenCount: m.TokenCount, State: StateActive})
	}
	if diff := cmp.Diff(want, got, ignoreCreated, ignoreUIDs); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}
	for _, m := range got {
		if len(m.UID) != 32 {
			t.Errorf("message %d: UID %q", m.ID, m.UID)
		}
	}
	sess, _ := s.Session(ctx, "s1")
	if sess.MessageCount != 4 || sess.ToolCallCount != 2 {
		t.Errorf("counters: messages %d tool calls %d, want 4 and 2", sess.MessageCount, sess.ToolCallCount)
	}
}

func testAppendMessage_IdempotencyKey(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	newTestSession(t, s, "s2")
	m := NewMessage{Role: RoleUser, Content: "hello", IdempotencyKey: "turn-1"}
	first, err := s.AppendMessage(ctx, "s1", m)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.AppendMessage(ctx, "s1", m)
	if err != nil || again != first {
		t.Fatalf("retry = %d, %v; want the first id %d", again, err, first)
	}
	other, err := s.AppendMessage(ctx, "s2", m)
	if err != nil || other == first {
		t.Fatalf("same key in another session = %d, %v; want a new row", other, err)
	}
	// Inside one batch too: the second use of a key answers with the first.
	ids, err := s.AppendMessages(ctx, "s1", []NewMessage{
		{Role: RoleUser, Content: "x", IdempotencyKey: "turn-2"},
		{Role: RoleUser, Content: "x", IdempotencyKey: "turn-2"},
		{Role: RoleUser, Content: "hello", IdempotencyKey: "turn-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != ids[1] || ids[2] != first {
		t.Errorf("batch ids %v: want [n n %d]", ids, first)
	}
	sess, _ := s.Session(ctx, "s1")
	msgs, _ := s.Messages(ctx, "s1", MessageQuery{})
	if sess.MessageCount != 2 || len(msgs) != 2 {
		t.Errorf("MessageCount %d, rows %d; want 2 and 2", sess.MessageCount, len(msgs))
	}
}

func testAppendMessage_BadInput(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	tests := []struct {
		name    string
		session string
		m       NewMessage
		want    error
	}{
		{"UnknownSession", "ghost", NewMessage{Role: RoleUser, Content: "x"}, ErrNotFound},
		{"EmptySessionID", "", NewMessage{Role: RoleUser, Content: "x"}, ErrInvalidInput},
		{"EmptyRole", "s1", NewMessage{Content: "x"}, ErrInvalidInput},
		{"UnknownRole", "s1", NewMessage{Role: "robot", Content: "x"}, ErrInvalidInput},
		{"InvalidUTF8Content", "s1", NewMessage{Role: RoleUser, Content: "caf\xe9"}, ErrInvalidInput},
		{"InvalidUTF8ToolArgs", "s1", NewMessage{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "x", Arguments: "\xff"}}}, ErrInvalidInput},
		{"NegativeTokens", "s1", NewMessage{Role: RoleUser, TokenCount: -1}, ErrInvalidInput},
		{"ReasoningDetailsNotJSON", "s1", NewMessage{Role: RoleAssistant, ReasoningDetails: `[{"type":"thinking"`}, ErrInvalidInput},
		{"ReasoningDetailsInvalidUTF8", "s1", NewMessage{Role: RoleAssistant, ReasoningDetails: "[\"\xff\"]"}, ErrInvalidInput},
		{"HugeToolName", "s1", NewMessage{Role: RoleTool, ToolName: strings.Repeat("n", 2000)}, ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.AppendMessage(ctx, tt.session, tt.m)
			if !errors.Is(err, tt.want) {
				t.Fatalf("AppendMessage = %v, want %v", err, tt.want)
			}
		})
	}
	msgs, _ := s.Messages(ctx, "s1", MessageQuery{IncludeRewound: true})
	all, _ := s.ListSessions(ctx, SessionFilter{})
	if len(msgs) != 0 || len(all) != 1 {
		t.Errorf("refused appends left %d messages and %d sessions; want 0 and 1", len(msgs), len(all))
	}
}

func testAppendMessage_ContentIsByteExact(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	tests := map[string]string{
		"NULBytes":      "\x00json:{\"a\":1}\x00tail",
		"OnlyNUL":       "\x00",
		"Empty":         "",
		"Emoji":         "👩‍💻 done ✅",
		"CJK":           "日本語のテキスト",
		"Combining":     "e\u0301",
		"LargeMultiMiB": strings.Repeat("0123456789abcdef", 1<<20), // 16 MiB
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			before, err := s.Session(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			id, err := s.AppendMessage(ctx, "s1", NewMessage{Role: RoleUser, Content: content})
			if err != nil && strings.Contains(content, "\x00") && errors.Is(err, ErrInvalidInput) {
				// An engine whose text type cannot hold NUL (PostgreSQL)
				// refuses the message, typed, and writes nothing; one that
				// takes it must give it back exactly (below).
				if after, err := s.Session(ctx, "s1"); err != nil || after.MessageCount != before.MessageCount {
					t.Errorf("a refused append changed the session: %v, %d messages, want %d", err, after.MessageCount, before.MessageCount)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Messages(ctx, "s1", MessageQuery{AfterID: id - 1, Limit: 1})
			if err != nil || len(got) != 1 {
				t.Fatalf("read back: %v (%d rows)", err, len(got))
			}
			if got[0].Content != content {
				t.Errorf("content changed: %d bytes in, %d bytes out", len(content), len(got[0].Content))
			}
		})
	}
}

func testMessages_Paging(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	var batch []NewMessage
	for i := range 10 {
		batch = append(batch, NewMessage{Role: RoleUser, Content: strings.Repeat("x", i)})
	}
	ids, err := s.AppendMessages(ctx, "s1", batch)
	if err != nil {
		t.Fatal(err)
	}
	list := func(q MessageQuery) []int64 {
		t.Helper()
		ms, err := s.Messages(ctx, "s1", q)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	tests := []struct {
		name string
		q    MessageQuery
		want []int64
	}{
		{"All", MessageQuery{}, ids},
		{"Limit", MessageQuery{Limit: 3}, ids[:3]},
		{"AfterID", MessageQuery{AfterID: ids[6]}, ids[7:]},
		{"NewestFirst", MessageQuery{NewestFirst: true, Limit: 2}, []int64{ids[9], ids[8]}},
		{"NewestFirstBefore", MessageQuery{NewestFirst: true, BeforeID: ids[5], Limit: 2}, []int64{ids[4], ids[3]}},
		{"Window", MessageQuery{AfterID: ids[2], BeforeID: ids[5]}, ids[3:5]},
		{"PastTheEnd", MessageQuery{AfterID: ids[9]}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, list(tt.q)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := s.Messages(ctx, "ghost", MessageQuery{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Messages(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.Messages(ctx, "s1", MessageQuery{Limit: -1}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("negative limit = %v, want ErrInvalidInput", err)
	}
}

func testMeta(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	if _, err := s.Meta(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Meta(missing) = %v, want ErrNotFound", err)
	}
	for _, v := range []string{"v1", "v2", ""} {
		if err := s.SetMeta(ctx, "k", v); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Meta(ctx, "k"); err != nil || got != v {
			t.Errorf("Meta after SetMeta(%q) = %q, %v", v, got, err)
		}
	}
	if err := s.SetMeta(ctx, "", "v"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("SetMeta(empty key) = %v, want ErrInvalidInput", err)
	}
	if err := s.SetMeta(ctx, "k", "\xff"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("SetMeta(invalid UTF-8) = %v, want ErrInvalidInput", err)
	}
}

func testMessage_ByID(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	id, err := s.AppendMessage(ctx, "s1", NewMessage{Role: RoleUser, Content: "find me"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Message(ctx, id)
	if err != nil || m.SessionID != "s1" || m.Content != "find me" || m.State != StateActive {
		t.Errorf("Message(%d) = %+v, %v", id, m, err)
	}
	if _, err := s.Message(ctx, id+1); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
	if _, err := s.Message(ctx, 0); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("id 0: %v, want ErrInvalidInput", err)
	}
}

// A provider's structured reasoning is signed: one changed byte (a key
// reordered, whitespace, an escape decoded) and the provider rejects the
// conversation, so the store returns ReasoningDetails exactly as given.
func testAppendMessage_ReasoningDetailsByteExact(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	details := []string{
		`[{"type":"thinking","thinking":"Let me think.","signature":"EqQBCkYIBxgCKkB+/=="},{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}]`,
		"[ {\"signature\" : \"s\\u00e9\",\n  \"type\":\"thinking\", \"thinking\":\"\\u003cb\\u003e\"} ]",
		`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAABo"}`,
	}
	var ids []int64
	for _, d := range details {
		id, err := s.AppendMessage(ctx, "s1", NewMessage{Role: RoleAssistant, Content: "answer", ReasoningDetails: d})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	got, err := s.Messages(ctx, "s1", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, m := range got {
		stored = append(stored, m.ReasoningDetails)
	}
	if diff := cmp.Diff(details, stored); diff != "" {
		t.Errorf("ReasoningDetails (-appended +stored):\n%s", diff)
	}
	one, err := s.Message(ctx, ids[1])
	if err != nil || one.ReasoningDetails != details[1] {
		t.Errorf("Message(%d).ReasoningDetails = %q, %v; want %q", ids[1], one.ReasoningDetails, err, details[1])
	}
	// A retry under the same key must carry the same details.
	m := NewMessage{Role: RoleAssistant, Content: "a", ReasoningDetails: details[0], IdempotencyKey: "k"}
	if _, err := s.AppendMessage(ctx, "s1", m); err != nil {
		t.Fatal(err)
	}
	m.ReasoningDetails = details[2]
	var conflict *IdempotencyConflictError
	if _, err := s.AppendMessage(ctx, "s1", m); !errors.As(err, &conflict) || conflict.Field != "reasoning details" {
		t.Errorf("same key, other reasoning details = %v, want an IdempotencyConflictError on reasoning details", err)
	}
}
