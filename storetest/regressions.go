// Regressions found by review of the domain and operations code: each test
// failed before its fix.
package storetest

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"
)

// a title that already exists in the target store passes validation
// and fails mid-write: earlier sessions stay imported (partial import), and
// the error is not ErrInvalidInput.
func testImport_TitleTakenInTheStoreIsDropped(t *testing.T, open Opener) {
	ctx := t.Context()
	a := open(t, Options{})
	mustCreate(t, a, NewSession{ID: "s1", Source: "x"})
	appendTexts(t, a, "s1", "hello")
	time.Sleep(5 * time.Millisecond)
	mustCreate(t, a, NewSession{ID: "s2", Source: "x", Title: "Project"})
	time.Sleep(5 * time.Millisecond)
	mustCreate(t, a, NewSession{ID: "s3", Source: "x"})
	file := exportAll(t, a)

	b := open(t, Options{})
	mustCreate(t, b, NewSession{ID: "other", Source: "x", Title: "Project"})
	res, err := b.Import(ctx, bytes.NewReader(file), ImportOptions{})
	if err != nil || res.Imported != 3 || res.Untitled != 1 {
		t.Fatalf("import: %+v %v; want all 3 imported, 1 without its title", res, err)
	}
	if s2, _ := b.Session(ctx, "s2"); s2.Title != "" {
		t.Errorf("s2 took a title the store already had: %q", s2.Title)
	}
}

// Orphaned counts a delegate child that is pruned right after.
func testPrune_OrphansCountOnlySurvivors(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "P")
	mustCreate(t, s, NewSession{ID: "D", ParentID: "P", Kind: ChildDelegate})
	s.EndSession(ctx, "P", "done")
	time.Sleep(3 * time.Millisecond)
	s.EndSession(ctx, "D", "done")
	time.Sleep(20 * time.Millisecond)
	res, err := s.Prune(ctx, 5*time.Millisecond)
	left, _ := s.ListSessions(ctx, SessionFilter{Limit: 10})
	t.Logf("prune %+v %v, left %d", res, err, len(left))
	if res.Orphaned != len(left) {
		t.Errorf("Orphaned=%d but %d sessions remain", res.Orphaned, len(left))
	}
}

// the write pass re-reads a regular file in place: a file changed after
// validation is written unvalidated (here truncated: s2 silently loses rows).
func testImport_WritesWhatItChecked(t *testing.T, open Opener) {
	ctx := t.Context()
	a := open(t, Options{})
	newTestSession(t, a, "s1")
	appendTexts(t, a, "s1", "x")
	time.Sleep(5 * time.Millisecond)
	newTestSession(t, a, "s2")
	appendTexts(t, a, "s2", "a", "b", "c")
	data := exportAll(t, a)
	path := t.TempDir() + "/f.jsonl"
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	cut := bytes.LastIndex(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) + 1
	b := open(t, Options{})
	once := false
	res, err := b.Import(ctx, f, ImportOptions{OnProgress: func(done, total int64) {
		if !once {
			once = true
			os.Truncate(path, int64(cut)) // another writer rewrites the file
		}
	}})
	got, _ := b.Messages(ctx, "s2", MessageQuery{})
	t.Logf("import %+v %v; s2 has %d of 3 messages", res, err, len(got))
	if err == nil && len(got) != 3 {
		t.Errorf("import succeeded with s2 truncated to %d messages", len(got))
	}
}

// exporting one compression child (SessionID without Lineage) names
// origins in a session outside the file; Import refuses the store's own
// export.
func testExportImport_OneContinuationAlone(t *testing.T, open Opener) {
	ctx := t.Context()
	a := open(t, Options{})
	newTestSession(t, a, "p")
	appendTexts(t, a, "p", "one")
	h := lockFor(t, a, "p")
	w, _ := a.ActiveWatermark(ctx, "p")
	appendTexts(t, a, "p", "late")
	if _, err := a.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := a.Export(ctx, &buf, ExportOptions{SessionID: "c"}); err != nil {
		t.Fatal(err)
	}
	b := open(t, Options{})
	res, err := b.Import(ctx, bytes.NewReader(buf.Bytes()), ImportOptions{})
	if err != nil {
		t.Errorf("importing Export(SessionID: child): %v %v", err, res.Errors)
	}
}

// rewinding a carried copy in the child hides it there, but the
// lineage view shows the parent's original again.
func testConversation_RewoundCopyHidesTheTurn(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	appendTexts(t, s, "p", "one")
	h := lockFor(t, s, "p")
	w, _ := s.ActiveWatermark(ctx, "p")
	appendTexts(t, s, "p", "UNDO-ME")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	cm, _ := s.Conversation(ctx, "c", ConversationOptions{})
	var copyID int64
	for _, m := range cm {
		if m.Content == "UNDO-ME" {
			copyID = m.ID
		}
	}
	if _, err := s.RewindTo(ctx, "c", copyID, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	view, _ := s.Conversation(ctx, "c", ConversationOptions{Lineage: true})
	var got []string
	for _, m := range view {
		got = append(got, fmt.Sprintf("%s/%d:%s", m.SessionID, m.ID, m.Content))
	}
	t.Logf("lineage view after rewinding the copy: %v", got)
	if strings.Contains(strings.Join(got, ","), "UNDO-ME") {
		t.Errorf("rewound turn still in the lineage view")
	}
}

// SessionConversationRoot stops after 100 steps: in a conversation of
// more than 101 sessions, the tip and an early session resolve different
// "roots", so two holders get the turn lease of one conversation.
func testTurnLease_OneRootForALongConversation(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c000")
	for i := 1; i <= 150; i++ {
		continueAs(t, s, fmt.Sprintf("c%03d", i-1), fmt.Sprintf("c%03d", i))
	}
	l1, got1, err1 := s.AcquireTurnLease(ctx, "c150", "a", 0)
	l2, got2, err2 := s.AcquireTurnLease(ctx, "c010", "b", 0)
	if err1 != nil || err2 != nil || l1.Key != "c000" || l2.Key != "c000" {
		t.Errorf("keys %q (%v) and %q (%v), want both c000", l1.Key, err1, l2.Key, err2)
	}
	if got1 && got2 {
		t.Errorf("two holders hold the turn lease of one conversation")
	}
}
