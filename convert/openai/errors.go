package openai

import (
	"fmt"

	"github.com/sessiondb/sessiondb/internal/jsondiff"
	"github.com/sessiondb/sessiondb/store"
)

// UnsupportedError says which part of which input message or item the
// store does not model. It matches store.ErrInvalidInput.
type UnsupportedError struct {
	// Message is the index of the message (or Responses item) in the input.
	Message int
	// Part names what was refused: a part or item type ("image_url") or
	// the path of the first field a conversion would lose ("name").
	Part string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("openai message %d: %s: sessiondb does not model this, and would lose it", e.Message, e.Part)
}

// Unwrap makes the error match store.ErrInvalidInput.
func (e *UnsupportedError) Unwrap() error { return store.ErrInvalidInput }

// lossless refuses want (the input, as JSON) unless got (the input
// converted to the store and back, as JSON) is the same, naming the first
// field lost. An output text's "annotations": [] (the API wants the list,
// and the store rebuilds it) means the same as its absence.
func lossless(want, got []byte) error {
	path, err := jsondiff.First(want, got, jsondiff.Default{Key: "annotations", Value: []any{}})
	if err != nil || path == "" {
		return err
	}
	e := &UnsupportedError{Part: path}
	if n, rest, ok := jsondiff.SplitIndex(path); ok {
		e.Message, e.Part = n, rest
	}
	if e.Part == "" {
		e.Part = "its shape (the store would give it back as other messages)"
	}
	return e
}

// asStored is what the store returns for messages appended as ns, for a
// conversion's check of itself (store.NewMessage.Stored).
func asStored(ns []store.NewMessage) []store.Message {
	out := make([]store.Message, len(ns))
	for i, n := range ns {
		out[i] = n.Stored()
	}
	return out
}

// validated returns ns, or the store's error for the first it would
// refuse (a part of no media type…).
func validated(ns []store.NewMessage) ([]store.NewMessage, error) {
	for i := range ns {
		if err := ns[i].Validate(); err != nil {
			return nil, fmt.Errorf("openai: %w", err)
		}
	}
	return ns, nil
}
