package searchtext

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ToolText is the searchable text of a message's tool calls, given as the
// tool_calls_json the store keeps (a JSON array of {id, name, arguments}):
// each call's function name and its arguments as the model wrote them,
// one per line, calls in order. The indexes hold it beside the content and
// the tool name, with the same rules, so a search finds a call by its
// function's name, a word or phrase of its arguments, or a substring.
// Arguments are searched as written: a JSON escape inside them (\n,
// \u00e9) is text, as it is to anyone reading the call. A NUL byte is a
// space: it separates words anyway, and PostgreSQL text cannot hold it. It
// returns nil for no calls, or for text that is not such an array.
//
// Migration 10 (and PostgreSQL's 4) computes the same text in SQL for the
// rows stored before it (json_each: name, newline, arguments, newline
// between calls; SQLite leaves a NUL as it is), so they must change
// together.
func ToolText(toolCallsJSON string) *string {
	var calls []struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(toolCallsJSON), &calls); err != nil || len(calls) == 0 {
		return nil
	}
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(jsonText(c.Name))
		b.WriteByte('\n')
		b.WriteString(jsonText(c.Arguments))
	}
	s := strings.ReplaceAll(b.String(), "\x00", " ")
	return &s
}

// jsonText is a JSON value as SQLite's ->> gives it: a string unquoted,
// null or absent empty, anything else its compact JSON text.
func jsonText(v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s
	}
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	var c bytes.Buffer
	if json.Compact(&c, v) != nil {
		return string(v)
	}
	return c.String()
}
