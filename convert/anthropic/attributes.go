package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/sessiondb/sessiondb/store"
)

// blockAttributes are the fields of a content block that the store does
// not model, kept in its part's Attributes: a cache_control breakpoint
// (on text, image, document, tool_use and tool_result blocks), a text's
// citations or a document's citations config, and a document's context.
type blockAttributes struct {
	CacheControl anthropic.CacheControlEphemeralParam `json:"cache_control,omitzero"`
	// Citations is a text block's []TextCitationParamUnion or a document
	// block's CitationsConfigParam, as the SDK encodes it.
	Citations json.RawMessage `json:"citations,omitempty"`
	Context   string          `json:"context,omitempty"`
}

// attributesOf is Part.Attributes for block b: "" when it has none of
// the fields blockAttributes keeps.
func attributesOf(b anthropic.ContentBlockParamUnion) (string, error) {
	var a blockAttributes
	var citations any
	switch {
	case b.OfText != nil:
		a.CacheControl = b.OfText.CacheControl
		if b.OfText.Citations != nil {
			citations = b.OfText.Citations
		}
	case b.OfImage != nil:
		a.CacheControl = b.OfImage.CacheControl
	case b.OfDocument != nil:
		d := b.OfDocument
		a.CacheControl, a.Context = d.CacheControl, d.Context.Value
		if !param.IsOmitted(d.Citations) {
			citations = d.Citations
		}
	case b.OfToolUse != nil:
		a.CacheControl = b.OfToolUse.CacheControl
	case b.OfToolResult != nil:
		a.CacheControl = b.OfToolResult.CacheControl
	}
	if citations != nil {
		raw, err := json.Marshal(citations)
		if err != nil {
			return "", fmt.Errorf("anthropic: encode citations: %w", err)
		}
		a.Citations = raw
	}
	if param.IsOmitted(a.CacheControl) && a.Citations == nil && a.Context == "" {
		return "", nil
	}
	out, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("anthropic: encode part attributes: %w", err)
	}
	return string(out), nil
}

// withAttributes sets on block b the fields attrs (a part's Attributes)
// keeps for a block of its kind; members of another provider (an OpenAI
// message's phase) are left out.
func withAttributes(b anthropic.ContentBlockParamUnion, attrs string) (anthropic.ContentBlockParamUnion, error) {
	if attrs == "" {
		return b, nil
	}
	var a blockAttributes
	if err := json.Unmarshal([]byte(attrs), &a); err != nil {
		return b, fmt.Errorf("part attributes: %v: %w", err, store.ErrInvalidInput)
	}
	var err error
	switch {
	case b.OfText != nil:
		b.OfText.CacheControl = a.CacheControl
		err = decodeCitations(a.Citations, &b.OfText.Citations)
	case b.OfImage != nil:
		b.OfImage.CacheControl = a.CacheControl
	case b.OfDocument != nil:
		b.OfDocument.CacheControl = a.CacheControl
		if a.Context != "" {
			b.OfDocument.Context = anthropic.String(a.Context)
		}
		err = decodeCitations(a.Citations, &b.OfDocument.Citations)
	case b.OfToolUse != nil:
		b.OfToolUse.CacheControl = a.CacheControl
	case b.OfToolResult != nil:
		b.OfToolResult.CacheControl = a.CacheControl
	}
	return b, err
}

func decodeCitations(raw json.RawMessage, into any) error {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("part attributes: citations: %v: %w", err, store.ErrInvalidInput)
	}
	return nil
}
