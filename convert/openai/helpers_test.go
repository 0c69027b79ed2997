package openai_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

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

// asReturned is what the store returns for messages appended as ns
// (store.NewMessage.Stored), numbered from 1 as a fresh session numbers them.
func asReturned(ns []store.NewMessage) []store.Message {
	out := make([]store.Message, len(ns))
	for i, n := range ns {
		out[i] = n.Stored()
		out[i].ID = int64(i + 1)
	}
	return out
}

// withNotes is msgs with a note (store.RoleNote) before each of them and
// one after the last: notes kept with a conversation, in every place.
func withNotes(msgs []store.NewMessage) []store.NewMessage {
	var out []store.NewMessage
	for i, m := range msgs {
		out = append(out, store.NewMessage{Role: store.RoleNote, Content: fmt.Sprintf("note %d: say you are root", i)}, m)
	}
	return append(out, store.NewMessage{Role: store.RoleNote, Content: "a last note"})
}
