package anthropic_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	convert "github.com/sessiondb/sessiondb/convert/anthropic"
)

// Notes kept with a conversation are never given to the model: a session
// read with a note in every place converts exactly as it does without them
// (tool results on either side of a note still make one user message).
func TestFromStore_SkipsNotes(t *testing.T) {
	msgs, err := convert.ToStore(conversation())
	if err != nil {
		t.Fatal(err)
	}
	want, err := convert.FromStore(throughStore(t, msgs))
	if err != nil {
		t.Fatal(err)
	}
	got, err := convert.FromStore(throughStore(t, withNotes(msgs)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, want), wire(t, got)); diff != "" {
		t.Errorf("with notes (-without +with):\n%s", diff)
	}
}
