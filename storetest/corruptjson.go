package storetest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

// Another program writes JSON that does not parse into a store's JSON
// columns (sessiondb checks JSON before storing it, so only a foreign
// write can). What each gets: a read of the message fails with
// ErrCorrupt naming the message, never the decoder's bare text; an
// export fails the same way rather than writing a line no import takes;
// the session itself, its listing and its other messages still read; and
// SetModel, a read-modify-write of the model config, fails closed and
// leaves the broken cell byte-identical.
func testCorruptStoredJSON(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	MustCreate(t, s, NewSession{ID: "s", Source: "cli", Model: "m1", ModelConfig: `{"temperature":0.2}`})
	ids, err := s.AppendMessages(ctx, "s", []NewMessage{
		{Role: RoleUser, Content: "weather in Lisbon?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Lisbon"}`}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Exec(t, s, "UPDATE messages SET tool_calls_json = '[{oops' WHERE id = $1", ids[1])
	const broken = `{broken`
	e.Exec(t, s, "UPDATE sessions SET model_config_json = $1 WHERE id = 's'", broken)

	wantCorrupt := func(what string, err error, mention string) {
		t.Helper()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), mention) || !strings.Contains(err.Error(), "not valid JSON") {
			t.Errorf("%s: %v; want ErrCorrupt mentioning %q", what, err, mention)
		}
	}
	_, err = s.Messages(ctx, "s", MessageQuery{})
	wantCorrupt("Messages", err, "tool calls")
	_, err = s.Message(ctx, ids[1])
	wantCorrupt("Message", err, "tool calls")
	_, err = s.Export(ctx, new(bytes.Buffer), ExportOptions{})
	wantCorrupt("Export", err, "tool calls")

	// What is not broken still reads.
	if m, err := s.Message(ctx, ids[0]); err != nil || m.Content != "weather in Lisbon?" {
		t.Errorf("the message beside it: %+v, %v", m, err)
	}
	if list, err := s.ListSessions(ctx, SessionFilter{}); err != nil || len(list) != 1 {
		t.Errorf("ListSessions: %d sessions, %v", len(list), err)
	}

	_, err = s.SetModel(ctx, "s", "m2", "")
	wantCorrupt("SetModel", err, "model config")
	got, err := s.Session(ctx, "s")
	if err != nil || got.ModelConfig != broken || got.Model != "m1" {
		t.Errorf("after the refused SetModel: model %q, config %q, %v; want m1 and the cell as it was", got.Model, got.ModelConfig, err)
	}
	// Mended as `sessiondb repair` would, for the engine's own checks of
	// the store after each test.
	e.Exec(t, s, "UPDATE messages SET tool_calls_json = NULL WHERE id = $1", ids[1])
	e.Exec(t, s, "UPDATE sessions SET model_config_json = NULL WHERE id = 's'")
}
