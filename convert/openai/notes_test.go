package openai_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	convert "github.com/sessiondb/sessiondb/convert/openai"
	"github.com/sessiondb/sessiondb/store"
)

// Notes kept with a conversation are never given to the model: a session
// read with a note in every place converts exactly as it does without
// them, for chat completions and for the Responses API.
func TestFromStore_SkipsNotes(t *testing.T) {
	chat, err := convert.ChatToStore(chatConversation())
	if err != nil {
		t.Fatal(err)
	}
	items, err := convert.ResponsesToStore(responsesConversation())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		msgs []store.NewMessage
		from func([]store.Message) (any, error)
	}{
		{"chat", chat, func(ms []store.Message) (any, error) { return convert.ChatFromStore(ms) }},
		{"responses", items, func(ms []store.Message) (any, error) { return convert.ResponsesFromStore(ms) }},
	} {
		want, err := c.from(throughStore(t, c.msgs))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.from(throughStore(t, withNotes(c.msgs)))
		if err != nil {
			t.Fatalf("%s with notes: %v", c.name, err)
		}
		if diff := cmp.Diff(wire(t, want), wire(t, got)); diff != "" {
			t.Errorf("%s with notes (-without +with):\n%s", c.name, diff)
		}
	}
}
