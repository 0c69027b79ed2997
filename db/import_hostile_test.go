package db

import (
	"testing"
)

// continued makes p and its compression child c through the real API, so
// p ends with reason compression and c is p's continuation.
func continued(t *testing.T, s *Store, p, c string) {
	t.Helper()
	newTestSession(t, s, p)
	appendTexts(t, s, p, "hello")
	h := lockFor(t, s, p)
	w, _ := s.ActiveWatermark(t.Context(), p)
	if _, err := s.PublishCompressionChild(t.Context(), p, Continuation{Holder: h, Watermark: w, Child: NewSession{ID: c},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
}
