package storetest

import (
	"errors"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

// A message larger than the engine keeps (Store.MaxMessageBytes, its text
// columns together) is refused with ErrTooLarge before anything is
// written, alone or inside a batch, and so is a compressor's; the limit
// leaves room for real tool outputs and images as data URLs (at least
// 32 MiB). What lies beyond it was measured per engine
// (docs/RELIABILITY.md): on SQLite a 100 MB message was acknowledged and
// then panicked the indexer, which hung Close (issue 38).
func testAppend_TooLargeIsRefused(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	limit := s.MaxMessageBytes()
	if limit < 32<<20 {
		t.Fatalf("MaxMessageBytes = %d, want at least 32 MiB: tool outputs and images as data URLs run to tens of MB", limit)
	}
	newTestSession(t, s, "s")
	half := int(limit / 2)
	tests := []struct {
		name  string
		batch []NewMessage
	}{
		{"ContentOverTheLimit", []NewMessage{{Role: RoleTool, ToolName: "read", Content: strings.Repeat("x", int(limit)+1)}}},
		{"FieldsTogetherOverTheLimit", []NewMessage{{Role: RoleAssistant, Content: strings.Repeat("a", half), Reasoning: strings.Repeat("r", half)}}},
		{"SecondOfABatch", []NewMessage{{Role: RoleUser, Content: "fits"}, {Role: RoleTool, ToolName: "read", Content: strings.Repeat("x", int(limit)+1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, err := s.AppendMessages(ctx, "s", tt.batch)
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "at most") {
				t.Fatalf("AppendMessages = %v, %v; want ErrTooLarge naming the limit", ids, err)
			}
			if errors.Is(err, ErrInvalidInput) {
				t.Errorf("%v matches ErrInvalidInput too: one sentinel per error", err)
			}
		})
	}
	h := LockFor(t, s, "s")
	if _, err := s.CompactSession(ctx, "s", Compaction{Holder: h, Messages: []NewMessage{{Role: RoleSystem, Content: strings.Repeat("s", int(limit)+1)}}}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("CompactSession with a summary over the limit: %v, want ErrTooLarge", err)
	}
	sess, err := s.Session(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if sess.MessageCount != 0 {
		t.Errorf("refused appends left %d messages", sess.MessageCount)
	}
	// A message under the limit is kept whole.
	big := strings.Repeat("tool output line\n", 1<<16) // 1.1 MB
	if _, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleTool, ToolName: "read", Content: big}); err != nil {
		t.Fatalf("a 1.1 MB message: %v", err)
	}
	msgs, err := s.Messages(ctx, "s", MessageQuery{})
	if err != nil || len(msgs) != 1 || msgs[0].Content != big {
		t.Fatalf("read back: %d messages, %v; want the 1.1 MB message whole", len(msgs), err)
	}
}
