package db

import (
	"errors"
	"testing"
)

func TestResume(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()

	newTestSession(t, s, "plain")
	appendTexts(t, s, "plain", "hello")

	// Compressed at the end of a turn: the child holds only the summary.
	newTestSession(t, s, "quiet-1")
	appendTexts(t, s, "quiet-1", "a", "b")
	summarise(t, s, "quiet-1", "quiet-2")
	summarise(t, s, "quiet-2", "quiet-3") // and again, before any new turn

	// Compressed mid-conversation: rows above the watermark are carried
	// into the child, which so has turns of its own.
	newTestSession(t, s, "busy-1")
	appendTexts(t, s, "busy-1", "a")
	h := lockFor(t, s, "busy-1")
	w, _ := s.ActiveWatermark(ctx, "busy-1")
	appendTexts(t, s, "busy-1", "late")
	if _, err := s.PublishCompressionChild(ctx, "busy-1", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "busy-2"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "never-spoke")

	tests := []struct{ in, tip, turns string }{
		{"plain", "plain", "plain"},
		{"quiet-1", "quiet-3", "quiet-1"},
		{"quiet-3", "quiet-3", "quiet-1"},
		{"quiet-2", "quiet-3", "quiet-1"},
		{"busy-1", "busy-2", "busy-2"},
		{"busy-", "", ""}, // ambiguous
		{"never", "never-spoke", "never-spoke"},
	}
	for _, tt := range tests {
		rp, err := s.Resume(ctx, tt.in)
		if tt.tip == "" {
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Resume(%q) = %v, want an ambiguous prefix", tt.in, err)
			}
			continue
		}
		if err != nil || rp.Tip.ID != tt.tip || rp.Turns.ID != tt.turns {
			t.Errorf("Resume(%q) = tip %q turns %q, %v; want %q %q", tt.in, rp.Tip.ID, rp.Turns.ID, err, tt.tip, tt.turns)
		}
	}
	if _, err := s.Resume(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Resume(ghost) = %v, want ErrNotFound", err)
	}
}

// summarise continues parent in child with a summary and nothing else.
func summarise(t *testing.T, s *Store, parent, child string) {
	t.Helper()
	h := lockFor(t, s, parent)
	w, err := s.ActiveWatermark(t.Context(), parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishCompressionChild(t.Context(), parent, Continuation{Holder: h, Watermark: w, Child: NewSession{ID: child},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary of " + parent, Summary: true}}}); err != nil {
		t.Fatal(err)
	}
}
