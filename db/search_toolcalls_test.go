package db

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/storetest"
)

// callTurn is an assistant message whose only text is its tool call.
func callTurn(word string) NewMessage {
	return NewMessage{Role: RoleAssistant, ToolCalls: []ToolCall{
		{ID: "c-" + word, Name: "lookup_" + word, Arguments: fmt.Sprintf(`{"q":"%s 東京%s"}`, word, word)}}}
}

// Every write that adds or removes index entries — the indexer, a delete
// of indexed and of queued rows, prune, a compression child's copies —
// keeps both indexes exactly in step with the tool text (FTS5's own
// integrity check against the messages: a 'delete' with other values than
// were indexed leaves postings behind).
func TestSearch_ToolTextIndexStaysExact(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	for _, id := range []string{"keep", "gone", "old", "cc"} {
		newTestSession(t, s, id)
	}
	for _, m := range []struct{ session, word string }{{"keep", "walrus"}, {"gone", "okapi"}, {"old", "quokka"}} {
		if _, err := s.AppendMessage(ctx, m.session, callTurn(m.word)); err != nil {
			t.Fatal(err)
		}
	}
	indexNow(t, s)
	s.w.ix.paused.Store(true)
	if _, err := s.AppendMessage(ctx, "gone", callTurn("narwhal")); err != nil { // still queued when deleted
		t.Fatal(err)
	}
	h := storetest.LockFor(t, s.Store, "cc")
	wm, _ := s.ActiveWatermark(ctx, "cc")
	if _, err := s.AppendMessage(ctx, "cc", callTurn("ibex")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishCompressionChild(ctx, "cc", Continuation{Holder: h, Watermark: wm, Child: NewSession{ID: "cc-child"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteSession(ctx, "gone", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndSession(ctx, "old", "done"); err != nil {
		t.Fatal(err)
	}
	storetest.Tick()
	if _, err := s.Prune(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	s.w.ix.paused.Store(false)
	indexNow(t, s)
	ftsConsistent(t, s)
	for q, want := range map[string]int{
		"walrus": 1, "lookup_walrus": 1, "東京walrus": 1, "okapi": 0, "narwhal": 0, "東京okapi": 0, "ibex": 2, "東京ibex": 2,
	} {
		if got := len(searchContents(t, s, q)); got != want {
			t.Errorf("Search(%q): %d hits, want %d", q, got, want)
		}
	}
	if got := len(searchContents(t, s, "quokka")); got != 0 {
		t.Errorf("Search(quokka) after the prune: %d hits, want 0", got)
	}
}

// A repair that rebuilds the full-text index rebuilds it with the tool
// text.
func TestRepair_RebuildsTheToolText(t *testing.T) {
	path := filledStore(t)
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(t.Context(), "a", callTurn("axolotl")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id > 10")
	if _, err := Repair(t.Context(), path, RepairOptions{Logger: testLogger(new(bytes.Buffer))}); err != nil {
		t.Fatal(err)
	}
	if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
		t.Fatalf("after repair: %s %v %v", r.Health, r.Details, err)
	}
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ftsConsistent(t, s)
	for _, q := range []string{"axolotl", "lookup_axolotl", "東京axolotl"} {
		if got := len(searchContents(t, s, q)); got != 1 {
			t.Errorf("Search(%q) after the repair: %d hits, want 1", q, got)
		}
	}
}
