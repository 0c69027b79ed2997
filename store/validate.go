package store

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/store/driver"
)

// newSessionID returns a readable, time-sortable, unique id:
// 20261129-211500-3f9a1c0b7d2e.
func newSessionID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405-") + hex.EncodeToString(b[:])
}

// messageBytes is what a message stores: the bytes of its text columns
// together (content, tool name, call id and text, tool calls, reasoning,
// parts, metadata, and the short labels). The engines' limits are
// measured on it (driver.Driver.MaxMessageBytes).
func messageBytes(p *driver.MessageInsertParams) int64 {
	n := int64(len(p.SessionID) + len(p.Role) + len(p.Content))
	for _, s := range []*string{p.ToolName, p.ToolCallID, p.ToolCallsJson, p.ToolText, p.Reasoning,
		p.ReasoningDetails, p.ReasoningContent, p.FinishReason, p.IdempotencyKey, p.PartsJson, p.Model, p.PlatformMessageID,
		p.MetadataJson, p.EffectDisposition} {
		if s != nil {
			n += int64(len(*s))
		}
	}
	return n
}

// checkSize refuses a message larger than the engine keeps, with
// ErrTooLarge, before anything is written. An engine past its limit
// fails, or worse (the SQLite driver ran out of its memory indexing a
// 100 MB message and panicked: issue 38).
func checkSize(p *driver.MessageInsertParams, limit int64) error {
	if n := messageBytes(p); limit > 0 && n > limit {
		return fmt.Errorf("%w: the message is %d bytes (content, tool calls, reasoning, parts and metadata together) "+
			"and this engine keeps at most %d (Store.MaxMessageBytes); split it, or keep a large attachment by reference",
			driver.ErrTooLarge, n, limit)
	}
	return nil
}
