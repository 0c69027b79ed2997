package db

import (
	"testing"
)

// compressInto publishes child as the compression child of parent (with
// one summary) and releases the lock.
func compressInto(t *testing.T, s *Store, parent, child string) {
	t.Helper()
	ctx := t.Context()
	h := lockFor(t, s, parent)
	w, err := s.ActiveWatermark(ctx, parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishCompressionChild(ctx, parent, Continuation{Holder: h, Watermark: w,
		Child:    NewSession{ID: child},
		Messages: []NewMessage{{Role: RoleSystem, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseCompressionLock(ctx, parent, h); err != nil {
		t.Fatal(err)
	}
}
