package db

import (
	"errors"
	"strings"
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

func TestAppend_ToCompressedSessionNamesTheContinuation(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	newTestSession(t, s, "p")
	appendTexts(t, s, "p", "one")
	compressInto(t, s, "p", "c1")
	compressInto(t, s, "c1", "c2")
	for _, tc := range []struct{ session, child, tip string }{{"p", "c1", "c2"}, {"c1", "c2", "c2"}} {
		_, err := s.AppendMessage(ctx, tc.session, NewMessage{Role: RoleUser, Content: "late"})
		var cont *ContinuedError
		if !errors.As(err, &cont) || !errors.Is(err, ErrSessionClosed) {
			t.Fatalf("append to %s: %v (%T), want a *ContinuedError matching ErrSessionClosed", tc.session, err, err)
		}
		if cont.SessionID != tc.session || cont.ChildID != tc.child || cont.TipID != tc.tip {
			t.Errorf("append to %s: %+v, want child %s tip %s", tc.session, cont, tc.child, tc.tip)
		}
		if !strings.Contains(err.Error(), `"`+tc.tip+`"`) {
			t.Errorf("message %q does not name the tip %q", err, tc.tip)
		}
	}
	// A compressor that comes back to the old parent is told the same.
	h := lockFor(t, s, "p")
	_, err := s.CompactSession(ctx, "p", Compaction{Holder: h, Messages: []NewMessage{{Role: RoleSystem, Content: "s"}}})
	var cont *ContinuedError
	if !errors.As(err, &cont) || cont.ChildID != "c1" {
		t.Errorf("compact the continued parent: %v, want a *ContinuedError naming c1", err)
	}
}
