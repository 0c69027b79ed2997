package storetest

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/sessiondb/sessiondb/store"
)

// TestSearch_FollowsTheDomain: what search finds follows the domain's own
// operations — compaction keeps rows findable, a carried copy is found once
// (a compression child's copy in the child, its original in the ended
// parent), rewind and hide take rows out (unhide brings them back), delete and
// prune remove them from the index, and imported rows are indexed. The
// index stays consistent throughout (Verify).
func testSearch_FollowsTheDomain(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	find := func(q string) []string {
		t.Helper()
		hits, err := s.Search(ctx, q, SearchOptions{Sort: SortOldest})
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		out := []string{}
		for _, h := range hits {
			out = append(out, h.SessionID)
		}
		return out
	}
	check := func(what, q string, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if diff := cmp.Diff(want, find(q)); diff != "" {
			t.Errorf("%s: Search(%q) sessions (-want +got):\n%s", what, q, diff)
		}
	}

	newTestSession(t, s, "a")
	appendTexts(t, s, "a", "alpha walrus", "bravo")
	h := lockFor(t, s, "a")
	w, _ := s.ActiveWatermark(ctx, "a")
	appendTexts(t, s, "a", "late narwhal")
	if _, err := s.CompactSession(ctx, "a", Compaction{Holder: h, Watermark: w,
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary of walrus talk", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	check("compacted rows stay findable", "alpha", "a")
	check("a carried copy is found once (its retired original is not)", "narwhal", "a")

	ids := appendTexts(t, s, "a", "rewind this platypus")
	if _, err := s.RewindTo(ctx, "a", ids[0], RewindOptions{LeaseHolder: h}); err != nil {
		t.Fatal(err)
	}
	check("rewound rows are not found", "platypus")

	s.SetHidden(ctx, "a", true)
	check("a hidden conversation is not found", "walrus")
	s.SetHidden(ctx, "a", false)
	check("unhidden, it is found again", "walrus", "a", "a")

	newTestSession(t, s, "gone")
	appendTexts(t, s, "gone", "ephemeral walrus")
	var export bytes.Buffer
	if _, err := s.Export(ctx, &export, ExportOptions{SessionID: "gone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteSession(ctx, "gone", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	check("a deleted session's rows are gone from the index", "ephemeral")
	if _, err := s.Import(ctx, &export, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	check("imported rows are indexed", "ephemeral", "gone")

	newTestSession(t, s, "p")
	appendTexts(t, s, "p", "early okapi")
	hp := lockFor(t, s, "p")
	wp, _ := s.ActiveWatermark(ctx, "p")
	appendTexts(t, s, "p", "tardy okapi")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: hp, Watermark: wp, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary of okapi talk", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	// Two conversations hold the row: the ended parent (its history is
	// kept) and the child that continues it.
	check("a compression child's carried copy is found, and the parent's original", "tardy", "p", "c")
	check("the parent's rows below the watermark stay only in the parent", "early", "p")
}
