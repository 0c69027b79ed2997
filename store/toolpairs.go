package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sessiondb/sessiondb/store/driver"
)

// callPairer sets Message.CallUID on the tool results of a read. Rows are
// given to see in id order (per session); a result's call is the latest
// call with its id seen before it in the same session, else the one
// MessageCallsBefore finds before the result's original. Pairing is a
// read's work: an append stores nothing for it and reads nothing.
type callPairer struct {
	latest map[[2]string]string // (session, provider call id) -> call UID
}

func newCallPairer() *callPairer { return &callPairer{latest: map[[2]string]string{}} }

// see records m's calls, or pairs m when it is a tool result.
func (p *callPairer) see(ctx context.Context, q driver.Executor, m *Message) error {
	switch {
	case m.Role == RoleAssistant:
		for _, c := range m.ToolCalls {
			p.latest[[2]string{m.SessionID, c.ID}] = c.UID
		}
	case m.Role == RoleTool && m.ToolCallID != "" && m.CallUID == "": // a stored pairing stands
		if uid, ok := p.latest[[2]string{m.SessionID, m.ToolCallID}]; ok {
			m.CallUID = uid
			return nil
		}
		uid, err := callUIDBefore(ctx, q, m.position(), m.ToolCallID)
		if err != nil {
			return err
		}
		m.CallUID = uid
	}
	return nil
}

// pairAll pairs the tool results among ms, whatever order ms is in.
func (p *callPairer) pairAll(ctx context.Context, q driver.Executor, ms []Message) error {
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(min(max(ms[a].ID-ms[b].ID, -1), 1)) })
	for _, i := range order {
		if err := p.see(ctx, q, &ms[i]); err != nil {
			return err
		}
	}
	return nil
}

// callUIDBefore is the UID of the call named callID of the nearest
// assistant message before position in position's session ("" when none
// has such a call).
func callUIDBefore(ctx context.Context, q driver.Executor, position int64, callID string) (string, error) {
	quoted, _ := json.Marshal(callID) // a string always marshals
	rows, err := q.MessageCallsBefore(ctx, driver.MessageCallsBeforeParams{Position: position,
		Needle: `"id":` + string(quoted)})
	if err != nil || len(rows) == 0 || rows[0].ToolCallsJson == nil {
		return "", err
	}
	caller := Message{ID: rows[0].ID}
	if rows[0].OriginID != nil {
		caller.OriginID = *rows[0].OriginID
	}
	if json.Unmarshal([]byte(*rows[0].ToolCallsJson), &caller.ToolCalls) != nil {
		return "", nil // a broken cell pairs nothing here; the caller's own read reports it
	}
	caller.fillLegacyUIDs()
	uid := ""
	for _, c := range caller.ToolCalls {
		if c.ID == callID {
			uid = c.UID // the last call with the id, as a provider's result answers
		}
	}
	return uid, nil
}

// DuplicateToolResultError is a compaction refused because it would leave
// two live results of one tool call (the compactor kept a result verbatim
// that the carried tail also holds, say). It matches ErrConflict: nothing
// was written; compact again from a fresh read.
type DuplicateToolResultError struct {
	SessionID  string
	ToolCallID string // the provider's call id
	CallUID    string // the call's UID (Message.CallUID of both results)
	Results    int    // live results it would have had
}

func (e *DuplicateToolResultError) Error() string {
	return fmt.Sprintf("compaction of %q would leave %d live results of tool call %q (uid %s); at most one is allowed",
		e.SessionID, e.Results, e.ToolCallID, e.CallUID)
}

func (e *DuplicateToolResultError) Unwrap() error { return ErrConflict }

// liveResultCounts counts a session's active tool results per call: by
// the call's UID, or, for a result no stored call answers, by its
// provider call id. A provider that reuses an id in a later exchange
// pairs each result with its own call, so reuse is not duplication.
func liveResultCounts(ctx context.Context, q driver.Executor, sessionID string) (map[string]int, map[string]string, error) {
	rows, err := q.MessageActiveAbove(ctx, driver.MessageActiveAboveParams{SessionID: sessionID, Watermark: 0})
	if err != nil {
		return nil, nil, err
	}
	counts, callIDs := map[string]int{}, map[string]string{}
	p := newCallPairer()
	for i := range rows {
		m, err := messageFromRow(&rows[i])
		if err != nil {
			return nil, nil, err
		}
		if err := p.see(ctx, q, &m); err != nil {
			return nil, nil, err
		}
		if m.Role != RoleTool || m.ToolCallID == "" {
			continue
		}
		key := "uid:" + m.CallUID
		if m.CallUID == "" {
			key = "id:" + m.ToolCallID
		}
		counts[key]++
		callIDs[key] = m.ToolCallID
	}
	return counts, callIDs, nil
}

// oneLiveResultPerCall refuses (a *DuplicateToolResultError) a change
// that left some call with more live results than before it and more
// than one: duplicates a legacy transcript already had are carried
// through as they are.
func oneLiveResultPerCall(ctx context.Context, q driver.Executor, sessionID string, before map[string]int) error {
	after, callIDs, err := liveResultCounts(ctx, q, sessionID)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the same call named every time
	for _, k := range keys {
		if n := after[k]; n > 1 && n > before[k] {
			uid, _ := strings.CutPrefix(k, "uid:")
			if strings.HasPrefix(k, "id:") {
				uid = ""
			}
			return &DuplicateToolResultError{SessionID: sessionID, ToolCallID: callIDs[k], CallUID: uid, Results: n}
		}
	}
	return nil
}
