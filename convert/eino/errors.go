package eino

import (
	"fmt"

	"github.com/sessiondb/sessiondb/store"
)

// UnsupportedError says which field of which message the other side does
// not model. It matches store.ErrInvalidInput.
type UnsupportedError struct {
	// Message is the index of the message in the input.
	Message int
	// Field names what was refused ("name", "tool_calls[0].extra",
	// "response_meta.usage", "parts").
	Field string
	// Hint says what to do instead, when there is something.
	Hint string
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("eino message %d: %s: sessiondb does not model this, and would lose it", e.Message, e.Field)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap makes the error match store.ErrInvalidInput.
func (e *UnsupportedError) Unwrap() error { return store.ErrInvalidInput }
