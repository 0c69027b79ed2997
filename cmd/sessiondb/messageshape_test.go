package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/db"
)

// append takes the message shape (parts, model, platform id, metadata,
// time); messages shows it, in text and in JSON.
func TestAppendAndShowTheMessageShape(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	parts := `[{"type":"text","text":"see the chart"},{"type":"image","media_type":"image/png","url":"data:image/png;base64,iVBORw0KGgo="},` +
		`{"type":"file","media_type":"application/pdf","blob_id":"b7","name":"report.pdf"},` +
		`{"type":"tool_use","tool_call_id":"c1","name":"plot","input":"{\"z\": 1, \"a\": 2}"}]`
	partsFile := filepath.Join(dir, "parts.json")
	if err := os.WriteFile(partsFile, []byte(parts), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, path, "session", "new", "--id", "s1"); code != 0 {
		t.Fatal(stderr)
	}
	appendArgs := []string{"append", "s1", "--role", "assistant", "--parts-file", partsFile, "--model", "claude-x",
		"--platform-id", "tg-9", "--metadata", `{"chat": 42}`, "--created-at", "2025-03-04T05:06:07.5Z"}
	code, first, stderr := runCLI(t, path, appendArgs...)
	if code != 0 {
		t.Fatalf("append: %d %s", code, stderr)
	}
	if code, again, stderr := runCLI(t, path, appendArgs...); code != 0 || again != first {
		t.Errorf("re-delivery = %d %q %s; want the first id %q", code, again, stderr, first)
	}
	edited := append(append([]string(nil), appendArgs...), "--content", "edited")
	if code, _, stderr := runCLI(t, path, edited...); code != 1 || !strings.Contains(stderr, "platform message id") {
		t.Errorf("another message under the platform id = %d %s; want exit 1 naming the platform id", code, stderr)
	}

	code, text, stderr := runCLI(t, path, "messages", "s1")
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"assistant · claude-x", "see the chart", "[image image/png: inline, 34 bytes]",
		"[file report.pdf application/pdf: blob b7]", `-> plot({"z": 1, "a": 2}) [c1]`} {
		if !strings.Contains(text, want) {
			t.Errorf("messages output lacks %q:\n%s", want, text)
		}
	}

	code, out, stderr := runCLI(t, path, "messages", "s1", "--json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var got []struct {
		Parts             []db.Part       `json:"parts"`
		Model             string          `json:"model"`
		PlatformMessageID string          `json:"platform_message_id"`
		Metadata          json.RawMessage `json:"metadata"`
		CreatedAt         string          `json:"created_at"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 {
		t.Fatalf("messages --json: %v\n%s", err, out)
	}
	var want []db.Part
	if err := json.Unmarshal([]byte(parts), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got[0].Parts); diff != "" {
		t.Errorf("parts (-appended +shown):\n%s", diff)
	}
	if got[0].Model != "claude-x" || got[0].PlatformMessageID != "tg-9" || strings.Join(strings.Fields(string(got[0].Metadata)), "") != `{"chat":42}` ||
		got[0].CreatedAt != "2025-03-04T05:06:07.500Z" {
		t.Errorf("shown as %+v", got[0])
	}

	for _, bad := range [][]string{
		{"--parts-file", partsFile + ".missing"},
		{"--content", "x", "--metadata", "[1]"},
		{"--content", "x", "--created-at", "yesterday"},
	} {
		args := append([]string{"append", "s1", "--role", "user"}, bad...)
		if code, _, stderr := runCLI(t, path, args...); code != 2 && code != 1 {
			t.Errorf("%v = %d %s, want refused", bad, code, stderr)
		}
	}
	badParts := filepath.Join(dir, "bad.json")
	os.WriteFile(badParts, []byte(`[{"type":"text","txt":"typo"}]`), 0o600)
	if code, _, stderr := runCLI(t, path, "append", "s1", "--role", "user", "--parts-file", badParts); code != 2 || !strings.Contains(stderr, "txt") {
		t.Errorf("a part with an unknown field = %d %s, want a usage error naming it", code, stderr)
	}
	trailing := filepath.Join(dir, "trailing.json")
	os.WriteFile(trailing, []byte(`[{"type":"text","text":"a"}] [{"type":"text","text":"b"}]`), 0o600)
	if code, _, stderr := runCLI(t, path, "append", "s1", "--role", "user", "--parts-file", trailing); code != 2 || !strings.Contains(stderr, "more than one") {
		t.Errorf("parts with a second array after them = %d %s, want a usage error", code, stderr)
	}
}
