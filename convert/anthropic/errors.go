package anthropic

import (
	"fmt"

	"github.com/sessiondb/sessiondb/store"
)

// UnsupportedError says which part of which input message the store does
// not model. It matches store.ErrInvalidInput.
type UnsupportedError struct {
	// Message is the index of the message in the input.
	Message int
	// Part names what was refused: a block type ("image") or the path of
	// the first field a conversion would lose ("content[0].cache_control").
	Part string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("anthropic message %d: %s: sessiondb does not model this, and would lose it", e.Message, e.Part)
}

// Unwrap makes the error match store.ErrInvalidInput.
func (e *UnsupportedError) Unwrap() error { return store.ErrInvalidInput }
