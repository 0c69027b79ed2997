package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3/responses"
	"github.com/sessiondb/sessiondb/store"
)

// textAttributes are the fields of a Responses assistant message's text
// that the store does not model, kept in the text part's Attributes: the
// message's phase (which gpt-5.3-codex and later want back on every
// assistant message) and status (other than completed: a message cut off
// by max_output_tokens is incomplete), and the output text's annotations
// and logprobs. Every text part of one message carries the message's
// phase and status, as it carries its item id.
type textAttributes struct {
	Phase       string                                             `json:"phase,omitempty"`
	Status      string                                             `json:"status,omitempty"`
	Annotations []responses.ResponseOutputTextAnnotationUnionParam `json:"annotations,omitempty"`
	Logprobs    []responses.ResponseOutputTextLogprobParam         `json:"logprobs,omitempty"`
}

func (a textAttributes) empty() bool {
	return a.Phase == "" && a.onlyPhase()
}

// encode is a as Part.Attributes: "" when it holds nothing.
func (a textAttributes) encode() (string, error) {
	if a.empty() {
		return "", nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("openai: encode part attributes: %w", err)
	}
	return string(b), nil
}

// onlyPhase reports whether a holds nothing an easy input message (which
// has a phase, and no status or text fields) could not send.
func (a textAttributes) onlyPhase() bool {
	return a.Status == "" && len(a.Annotations) == 0 && len(a.Logprobs) == 0
}

// partAttributes reads the OpenAI fields of a part's Attributes; members
// of another provider (an Anthropic block's cache_control) are left out.
func partAttributes(p store.Part) (textAttributes, error) {
	var a textAttributes
	if p.Attributes == "" {
		return a, nil
	}
	if err := json.Unmarshal([]byte(p.Attributes), &a); err != nil {
		return a, fmt.Errorf("part attributes: %v: %w", err, store.ErrInvalidInput)
	}
	return a, nil
}
