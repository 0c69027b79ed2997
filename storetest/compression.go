package storetest

import (
	"errors"
	"fmt"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

func testCompactSession_VerifiesTheLock(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c")
	AppendTexts(t, s, "c", "one")
	cases := []struct {
		name    string
		holder  string
		c       Compaction
		wantErr error
	}{
		{"no lock held", "nobody", Compaction{Watermark: 1}, ErrLeaseLost},
		{"empty holder", "", Compaction{Watermark: 1}, ErrInvalidInput},
		{"negative watermark", "x", Compaction{Watermark: -1}, ErrInvalidInput},
		{"idempotency key", "x", Compaction{Messages: []NewMessage{{Role: RoleUser, IdempotencyKey: "k"}}}, ErrInvalidInput},
		{"bad role", "x", Compaction{Messages: []NewMessage{{Role: "robot"}}}, ErrInvalidInput},
	}
	for _, c := range cases {
		c.c.Holder = c.holder
		if _, err := s.CompactSession(ctx, "c", c.c); !errors.Is(err, c.wantErr) {
			t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
		}
	}
	if _, err := s.CompactSession(ctx, "nope", Compaction{Holder: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if diff := cmp.Diff([]string{"active:one"}, Contents(t, s, "c")); diff != "" {
		t.Errorf("refused compactions changed rows:\n%s", diff)
	}
}

func testCreateSession_RefusesACompressionChild(t *testing.T, open Opener) {
	s := open(t, Options{})
	newTestSession(t, s, "p")
	_, err := s.CreateSession(t.Context(), NewSession{ID: "c", ParentID: "p", Kind: ChildCompression})
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("CreateSession with kind compression: %v, want ErrInvalidInput", err)
	}
}

// continueAs continues parent's conversation in a new compression child
// (lock, publish, release), as a compressor would.
func continueAs(t testing.TB, s *Store, parent, child string) {
	t.Helper()
	h := LockFor(t, s, parent)
	if _, err := s.PublishCompressionChild(t.Context(), parent, Continuation{Holder: h, Child: NewSession{ID: child}}); err != nil {
		t.Fatalf("continue %s as %s: %v", parent, child, err)
	}
	if _, err := s.ReleaseCompressionLock(t.Context(), parent, h); err != nil {
		t.Fatal(err)
	}
}

func testCompactSession_ReplacesUpToTheWatermarkAndCarriesLateRows(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c")
	AppendTexts(t, s, "c", "one", "two", "three")
	h := LockFor(t, s, "c")
	w, err := s.ActiveWatermark(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	// Appends never wait for the compression lock: this one lands while the
	// compressor summarises, above its watermark.
	if _, err := s.AppendMessage(ctx, "c", NewMessage{Role: RoleUser, Content: "late", IdempotencyKey: "k-late"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.CompactSession(ctx, "c", Compaction{Holder: h, Watermark: w, Messages: []NewMessage{
		{Role: RoleAssistant, Content: "summary of one..three", Summary: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Compacted != 3 || len(res.IDs) != 1 || len(res.Carried) != 1 {
		t.Errorf("result %+v, want 3 compacted, 1 new, 1 carried", res)
	}
	want := []string{"compacted:one", "compacted:two", "compacted:three", "rewound:late",
		"active:summary of one..three", "active:late"}
	if diff := cmp.Diff(want, Contents(t, s, "c")); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	sess, _ := s.Session(ctx, "c")
	if sess.MessageCount != 2 {
		t.Errorf("message_count = %d, want 2 (active rows)", sess.MessageCount)
	}
	// The late append's key moved to its copy: a retry returns the copy.
	id, err := s.AppendMessage(ctx, "c", NewMessage{Role: RoleUser, Content: "late", IdempotencyKey: "k-late"})
	if err != nil || id != res.Carried[0] {
		t.Errorf("retry of the late append: id %d err %v, want the carried copy %d", id, err, res.Carried[0])
	}
	ms, _ := s.Messages(ctx, "c", MessageQuery{})
	if got := ms[len(ms)-1]; got.OriginID == 0 {
		t.Errorf("carried copy has no origin: %+v", got)
	}
}

func testPublishCompressionChild(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	MustCreate(t, s, NewSession{ID: "p", Source: "cli", Model: "m1", Cwd: "/w", Title: "Trip plans"})
	AppendTexts(t, s, "p", "a", "b")
	h := LockFor(t, s, "p")
	w, _ := s.ActiveWatermark(ctx, "p")
	AppendTexts(t, s, "p", "tail")
	if _, err := s.SetPinned(ctx, "p", true); err != nil {
		t.Fatal(err)
	}

	child, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w,
		Child:    NewSession{ID: "p2"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary of a, b", Summary: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if child.ParentID != "p" || child.Kind != ChildCompression || child.Source != "cli" || child.Model != "m1" ||
		child.Cwd != "/w" || !child.Pinned || child.Title != "Trip plans #2" || child.MessageCount != 2 {
		t.Errorf("child = %+v", child)
	}
	if diff := cmp.Diff([]string{"active:summary of a, b", "active:tail"}, Contents(t, s, "p2")); diff != "" {
		t.Errorf("child rows:\n%s", diff)
	}
	parent, _ := s.Session(ctx, "p")
	if parent.EndReason != "compression" || parent.Title != "Trip plans" {
		t.Errorf("parent after publish: reason %q title %q", parent.EndReason, parent.Title)
	}
	// The parent takes no more messages, and cannot be published twice.
	if _, err := s.AppendMessage(ctx, "p", NewMessage{Role: RoleUser, Content: "x"}); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("append to compressed parent: %v, want ErrSessionClosed", err)
	}
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Child: NewSession{ID: "p3"}}); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("second publish: %v, want ErrSessionClosed", err)
	}
	// Lineage and tip from any member.
	for _, from := range []string{"p", "p2"} {
		tip, err := s.CompressionTip(ctx, from)
		if err != nil || tip.ID != "p2" {
			t.Errorf("tip from %s = %q %v", from, tip.ID, err)
		}
		chain, _ := s.Lineage(ctx, from)
		if len(chain) != 2 || chain[0].ID != "p" || chain[1].ID != "p2" {
			t.Errorf("lineage from %s = %v", from, chain)
		}
	}
}

func testPublishCompressionChild_Refusals(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	newTestSession(t, s, "taken")
	newTestSession(t, s, "explicit")
	newTestSession(t, s, "auto")
	h := LockFor(t, s, "p")
	he := LockFor(t, s, "explicit")
	ha := LockFor(t, s, "auto")
	s.EndSession(ctx, "explicit", "user_exit")
	s.EndSession(ctx, "auto", "idle_timeout")

	cases := []struct {
		name    string
		parent  string
		c       Continuation
		wantErr error
	}{
		{"wrong holder", "p", Continuation{Holder: "other", Child: NewSession{ID: "c1"}}, ErrLeaseLost},
		{"child id taken", "p", Continuation{Holder: h, Child: NewSession{ID: "taken"}}, ErrExists},
		{"child given a title", "p", Continuation{Holder: h, Child: NewSession{ID: "c2", Title: "x"}}, ErrInvalidInput},
		{"child is the parent", "p", Continuation{Holder: h, Child: NewSession{ID: "p"}}, ErrInvalidInput},
		{"explicitly ended parent", "explicit", Continuation{Holder: he, Child: NewSession{ID: "c3"}}, ErrSessionClosed},
		{"unknown parent", "nope", Continuation{Holder: h, Child: NewSession{ID: "c4"}}, ErrNotFound},
	}
	for _, c := range cases {
		if _, err := s.PublishCompressionChild(ctx, c.parent, c.c); !errors.Is(err, c.wantErr) {
			t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
		}
	}
	for _, id := range []string{"c1", "c3", "c4"} {
		if _, err := s.Session(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("refused publish left child %s behind: %v", id, err)
		}
	}
	// An automatic end stamp does not close a session to compression.
	if _, err := s.PublishCompressionChild(ctx, "auto", Continuation{Holder: ha, Child: NewSession{ID: "auto2"}}); err != nil {
		t.Errorf("publish over an automatic end: %v", err)
	}
	if p, _ := s.Session(ctx, "auto"); p.EndReason != "compression" {
		t.Errorf("auto parent end reason = %q, want compression", p.EndReason)
	}
}

func testLineage_LongChainAndABranch(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	prev := "n0"
	newTestSession(t, s, prev)
	for i := 1; i < 30; i++ {
		id := fmt.Sprintf("n%d", i)
		continueAs(t, s, prev, id)
		prev = id
	}
	chain, err := s.Lineage(ctx, "n15")
	if err != nil || len(chain) != 30 || chain[0].ID != "n0" || chain[29].ID != "n29" {
		t.Fatalf("lineage of 30: %d sessions %v", len(chain), err)
	}
	// A branch off the chain is a conversation of its own.
	MustCreate(t, s, NewSession{ID: "b", ParentID: "n3", Kind: ChildBranch})
	if chain, _ := s.Lineage(ctx, "b"); len(chain) != 1 {
		t.Errorf("branch lineage = %d sessions, want 1", len(chain))
	}
}
