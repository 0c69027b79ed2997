package db

import (
	"testing"
)

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
