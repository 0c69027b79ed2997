package store

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// The tags of a memory-context block: what a memory provider puts before
// a prompt for one model call (recalled facts, profile notes), which is
// meant to be sent, never kept.
const (
	memoryContextOpen  = "<memory-context>"
	memoryContextClose = "</memory-context>"
	// memoryContextName finds the tag in stored JSON too, whichever way
	// its angle brackets were escaped.
	memoryContextName = "memory-context"
)

// ScrubMemoryContext removes leaked memory-context blocks from a session's
// messages: every "<memory-context>…</memory-context>" (with the blank
// space after it) is cut from the content and from the text parts of
// every message of the session, in any state, in one transaction; the
// search index follows. A block that was recalled once for a model call
// and then stored with the prompt would otherwise be shown, searched and
// sent again with every resume. An opening tag without its closing one is
// left alone (it is not a block). It returns how many messages changed;
// an unknown session gives ErrNotFound.
func (s *Store) ScrubMemoryContext(ctx context.Context, sessionID string) (int, error) {
	const op = "scrub memory context"
	if err := rules.CheckID("session id", sessionID); err != nil {
		return 0, opErr(op, sessionID, err)
	}
	var changed int
	err := s.write(ctx, op, sessionID, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		changed = 0
		if err := sessionMustExist(ctx, tx, sessionID); err != nil {
			return err
		}
		rows, err := tx.MessagesHoldingText(ctx, driver.MessagesHoldingTextParams{SessionID: sessionID,
			Needle: memoryContextOpen, PartsNeedle: memoryContextName})
		if err != nil {
			return err
		}
		for _, r := range rows {
			content, cut := scrubMemoryContext(r.Content)
			parts, partsCut, err := scrubParts(r.PartsJson)
			if err != nil {
				return err
			}
			if !cut && !partsCut {
				continue
			}
			if err := tx.MessageSetContent(ctx, driver.MessageSetContentParams{ID: r.ID, Content: content, PartsJson: parts}); err != nil {
				return err
			}
			changed++
		}
		if changed > 0 { // a visible change: the display revision moves once
			return tx.SessionBumpDisplayRevision(ctx, sessionID)
		}
		return nil
	})
	return changed, err
}

// scrubMemoryContext cuts every complete memory-context block out of text.
func scrubMemoryContext(text string) (string, bool) {
	var b strings.Builder
	rest, cut := text, false
	for {
		i := strings.Index(rest, memoryContextOpen)
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], memoryContextClose)
		if j < 0 {
			break
		}
		b.WriteString(rest[:i])
		rest = strings.TrimLeft(rest[i+j+len(memoryContextClose):], " \t\r\n")
		cut = true
	}
	if !cut {
		return text, false
	}
	b.WriteString(rest)
	return b.String(), true
}

// scrubParts scrubs the text parts of a message's stored parts.
func scrubParts(partsJSON *string) (*string, bool, error) {
	if partsJSON == nil || !strings.Contains(*partsJSON, memoryContextName) {
		return partsJSON, false, nil
	}
	var parts []Part
	if err := json.Unmarshal([]byte(*partsJSON), &parts); err != nil {
		return nil, false, err
	}
	cut := false
	for i := range parts {
		if parts[i].Type != PartText {
			continue
		}
		if t, ok := scrubMemoryContext(parts[i].Text); ok {
			parts[i].Text, cut = t, true
		}
	}
	if !cut {
		return partsJSON, false, nil
	}
	b, err := json.Marshal(parts)
	if err != nil {
		return nil, false, err
	}
	return rules.Ptr(string(b)), true, nil
}
