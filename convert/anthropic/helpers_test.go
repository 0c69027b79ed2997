package anthropic_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

// asReturned is what the store returns for messages appended as ns: every
// field as given, and, for a message with parts, Content and ToolCalls
// filled from them when the caller left them out (store.NewMessage.Parts).
func asReturned(ns []store.NewMessage) []store.Message {
	out := make([]store.Message, len(ns))
	for i, n := range ns {
		m := store.Message{ID: int64(i + 1), Role: n.Role, Content: n.Content, ToolName: n.ToolName, ToolCallID: n.ToolCallID,
			ToolCalls: n.ToolCalls, Reasoning: n.Reasoning, ReasoningDetails: n.ReasoningDetails, Parts: n.Parts,
			Model: n.Model, Metadata: n.Metadata, PlatformMessageID: n.PlatformMessageID}
		if len(n.Parts) > 0 && m.Content == "" {
			m.Content = store.PlainText(n.Parts)
		}
		if len(n.Parts) > 0 && len(m.ToolCalls) == 0 {
			for _, p := range n.Parts {
				if p.Type == store.PartToolUse {
					m.ToolCalls = append(m.ToolCalls, store.ToolCall{ID: p.ToolCallID, Name: p.Name, Arguments: p.Input, ItemID: p.ItemID})
				}
			}
		}
		out[i] = m
	}
	return out
}

// throughStore appends msgs to a session of a real SQLite store and reads
// them back, as a gateway does between two turns.
func throughStore(t *testing.T, msgs []store.NewMessage) []store.Message {
	t.Helper()
	ctx := t.Context()
	s, err := db.Open(ctx, filepath.Join(t.TempDir(), "state.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "s1", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, "s1", msgs); err != nil {
		t.Fatal(err)
	}
	stored, err := s.Messages(ctx, "s1", db.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// needPartsStorage skips (failing under CI=true) when the store does not
// yet keep a message's parts: the round trips of images, documents and
// ordered content through a real file need it.
func needPartsStorage(t *testing.T) {
	t.Helper()
	probe := []store.NewMessage{{Role: store.RoleUser, Parts: []store.Part{{Type: store.PartText, Text: "probe"}}}}
	if got := throughStore(t, probe); len(got) == 1 && len(got[0].Parts) == 1 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("the store does not keep message parts (store.NewMessage.Parts): the converters' round trip through it loses them")
	}
	t.Skip("the store does not keep message parts yet (issue 18 item 4); run again once it does, or with CI=true to fail")
}

// wire is v as the SDK sends it, decoded, for go-cmp diffs of what the
// provider would receive.
func wire(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
