package storetest

import (
	"errors"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func testSetModel(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	if _, err := s.CreateSession(ctx, NewSession{ID: "s1", Source: "cli", Model: "gpt-4o", ModelConfig: `{"temperature":0.2}`}); err != nil {
		t.Fatal(err)
	}
	first, _ := s.AppendMessage(ctx, "s1", NewMessage{Role: RoleUser, Content: "hi"})
	s.RecordUsage(ctx, "s1", UsageUpdate{Usage: Usage{InputTokens: 100, APICalls: 1}})

	switched, err := s.SetModel(ctx, "s1", "claude-sonnet-4.5", "anthropic")
	if err != nil || !switched {
		t.Fatalf("SetModel = %v, %v", switched, err)
	}
	if again, err := s.SetModel(ctx, "s1", "claude-sonnet-4.5", "anthropic"); err != nil || again {
		t.Errorf("setting the same model again = %v, %v; want no switch", again, err)
	}
	s.AppendMessage(ctx, "s1", NewMessage{Role: RoleAssistant, Content: "hello"})
	s.RecordUsage(ctx, "s1", UsageUpdate{Usage: Usage{InputTokens: 50, APICalls: 1}})

	sess, _ := s.Session(ctx, "s1")
	if sess.Model != "claude-sonnet-4.5" || sess.ModelConfig != `{"model":"claude-sonnet-4.5","provider":"anthropic","temperature":0.2}` {
		t.Errorf("session after the switch: model %q, config %s", sess.Model, sess.ModelConfig)
	}
	sw, err := s.ModelSwitches(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelSwitch{{From: "gpt-4o", To: "claude-sonnet-4.5", Provider: "anthropic", AfterMessageID: first}}
	if diff := cmp.Diff(want, sw, cmpopts.IgnoreFields(ModelSwitch{}, "At")); diff != "" {
		t.Errorf("switches (-want +got):\n%s", diff)
	}
	_, byModel, err := s.SessionUsage(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, m := range byModel {
		got[m.Model] = m.InputTokens
	}
	if diff := cmp.Diff(map[string]int64{"gpt-4o": 100, "claude-sonnet-4.5": 50}, got); diff != "" {
		t.Errorf("usage by model shows the switch (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		id, model string
		want      error
	}{{"ghost", "m", ErrNotFound}, {"s1", "", ErrInvalidInput}} {
		if _, err := s.SetModel(ctx, tt.id, tt.model, ""); !errors.Is(err, tt.want) {
			t.Errorf("SetModel(%q, %q) = %v, want %v", tt.id, tt.model, err, tt.want)
		}
	}
}
