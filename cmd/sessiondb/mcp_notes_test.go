package main

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sessiondb/sessiondb/db"
)

// TestMCPNotes: append_note stores a note (RoleNote), never an assistant
// message, and only in mcp-notes and the sessions --notes-session named;
// a note to any other session is refused before anything is written. The
// tool says so in its description.
func TestMCPNotes(t *testing.T) {
	s, err := db.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, id := range []string{"opened", "closed"} {
		if _, err := s.CreateSession(t.Context(), db.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	tools := &mcpTools{store: s.Store, log: slog.New(slog.DiscardHandler), noteSessions: []string{mcpNotesID, "opened"}}

	for _, sid := range []string{"", mcpNotesID, "opened"} {
		out, err := tools.note(t.Context(), noteIn{Content: "a note to " + sid, SessionID: sid})
		if err != nil {
			t.Fatalf("note to %q: %v", sid, err)
		}
		m, err := s.Message(t.Context(), out.MessageID)
		if err != nil || m.Role != db.RoleNote {
			t.Errorf("note to %q stored as %+v, %v; want role note", sid, m, err)
		}
	}
	for _, sid := range []string{"closed", "missing", "opened-2"} {
		_, err := tools.note(t.Context(), noteIn{Content: "I, the assistant, say so", SessionID: sid})
		if err == nil || !strings.Contains(err.Error(), "not open to notes") {
			t.Errorf("note to %q: %v, want it refused", sid, err)
		}
	}
	if ms, err := s.Messages(t.Context(), "closed", db.MessageQuery{}); err != nil || len(ms) != 0 {
		t.Errorf("the closed session holds %d messages (%v), want none", len(ms), err)
	}
	if _, err := tools.note(t.Context(), noteIn{Content: "x", SessionID: "opened", IdempotencyKey: strings.Repeat("k", 10_000)}); !errors.Is(err, db.ErrInvalidInput) {
		t.Errorf("a bad key: %v, want the store's ErrInvalidInput", err)
	}

	server := mcp.NewServer(&mcp.Implementation{Name: "test"}, nil)
	tools.register(server, true)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tool := range list.Tools {
		found = found || tool.Name == "append_note"
		if tool.Name == "append_note" && (!strings.Contains(tool.Description, `role "note"`) ||
			!strings.Contains(tool.Description, "never given to a model") || !strings.Contains(tool.Description, `"opened"`)) {
			t.Errorf("append_note's description does not say what a note is and where it goes: %s", tool.Description)
		}
	}
	if !found {
		t.Error("no append_note tool")
	}
}
