// Regressions found by review of the domain and operations code: each test
// failed before its fix.
package db

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// a title that already exists in the target store passes validation
// and fails mid-write: earlier sessions stay imported (partial import), and
// the error is not ErrInvalidInput.
func TestImport_TitleTakenInTheStoreIsDropped(t *testing.T) {
	ctx := t.Context()
	a := openTestStore(t, Options{})
	mustCreate(t, a, NewSession{ID: "s1", Source: "x"})
	appendTexts(t, a, "s1", "hello")
	time.Sleep(5 * time.Millisecond)
	mustCreate(t, a, NewSession{ID: "s2", Source: "x", Title: "Project"})
	time.Sleep(5 * time.Millisecond)
	mustCreate(t, a, NewSession{ID: "s3", Source: "x"})
	file := exportAll(t, a)

	b := openTestStore(t, Options{})
	mustCreate(t, b, NewSession{ID: "other", Source: "x", Title: "Project"})
	res, err := b.Import(ctx, bytes.NewReader(file), ImportOptions{})
	if err != nil || res.Imported != 3 || res.Untitled != 1 {
		t.Fatalf("import: %+v %v; want all 3 imported, 1 without its title", res, err)
	}
	if s2, _ := b.Session(ctx, "s2"); s2.Title != "" {
		t.Errorf("s2 took a title the store already had: %q", s2.Title)
	}
}

// exporting one compression child (SessionID without Lineage) names
// origins in a session outside the file; Import refuses the store's own
// export.
func TestExportImport_OneContinuationAlone(t *testing.T) {
	ctx := t.Context()
	a := openTestStore(t, Options{})
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
	b := openTestStore(t, Options{})
	res, err := b.Import(ctx, bytes.NewReader(buf.Bytes()), ImportOptions{})
	if err != nil {
		t.Errorf("importing Export(SessionID: child): %v %v", err, res.Errors)
	}
}

// a continuation whose started_at sorts before its parent (same
// millisecond with a smaller id, or clock skew) is exported first; the
// full export is then refused by Import.
func TestExportImport_ChildExportedBeforeItsParent(t *testing.T) {
	ctx := t.Context()
	a := openTestStore(t, Options{})
	newTestSession(t, a, "zparent")
	appendTexts(t, a, "zparent", "one")
	h := lockFor(t, a, "zparent")
	w, _ := a.ActiveWatermark(ctx, "zparent")
	appendTexts(t, a, "zparent", "late")
	if _, err := a.PublishCompressionChild(ctx, "zparent", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "achild"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	// Same millisecond as the parent (what a fast publish gives).
	if err := a.write(ctx, "t", "", time.Second, func(ctx context.Context, tx genDBTX) error {
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET started_at = (SELECT started_at FROM sessions WHERE id='zparent') WHERE id='achild'")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	file := exportAll(t, a)
	b := openTestStore(t, Options{})
	res, err := b.Import(ctx, bytes.NewReader(file), ImportOptions{})
	if err != nil {
		t.Fatalf("importing a full export: %v %v", err, res.Errors)
	}
	if again := exportAll(t, b); !bytes.Equal(file, again) {
		t.Errorf("round trip differs when a child is exported before its parent:\n%s\n---\n%s", file, again)
	}
}

// Prune's cursor is advanced inside its write callback; when the
// batch is replayed (another caller's statement interrupted mid-batch rolls
// everyone back) the replay starts past the first page.
func TestPrune_ReplayedBatchStartsFromItsOwnCursor(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	for i := range 150 {
		id := fmt.Sprintf("s%03d", i)
		newTestSession(t, s, id)
		if _, err := s.EndSession(ctx, id, "done"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	ictx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var res PruneResult
	outs := queueBehindMu(t, s,
		func() error {
			var err error
			res, err = s.Prune(context.Background(), 5*time.Millisecond)
			return err
		},
		func() error {
			return s.w.write(ictx, 5*time.Second, func(ctx context.Context, tx genDBTX) error {
				time.AfterFunc(20*time.Millisecond, cancel)
				_, err := tx.ExecContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 50000000)
					INSERT INTO meta(key, value, updated_at) SELECT 'r'||x, 'v', 0 FROM c`)
				return err
			})
		},
	)
	err0, _ := wait(t, outs[0], 20*time.Second)
	err1, _ := wait(t, outs[1], 20*time.Second)
	left, _ := s.ListSessions(ctx, SessionFilter{Limit: 1000})
	t.Logf("prune: %+v %v; interrupted: %v; sessions left: %d", res, err0, err1, len(left))
	if len(left) != 0 {
		t.Errorf("%d eligible sessions survived Prune (reported %+v)", len(left), res)
	}
}

// rewinding a carried copy in the child hides it there, but the
// lineage view shows the parent's original again.
func TestConversation_RewoundCopyHidesTheTurn(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
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

// Orphaned counts a delegate child that is pruned right after.
func TestPrune_OrphansCountOnlySurvivors(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
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

// Vacuum meets another connection's write lock (in this process, so
// otherOpeners does not see it): the error is not ErrLocked.
func TestVacuum_AnotherConnectionsLockIsErrLocked(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "x")
	holdWriteLock(t, s.path, 8*time.Second)
	start := time.Now()
	_, err := s.Vacuum(t.Context())
	t.Logf("vacuum after %v: %v (ErrLocked=%v)", time.Since(start).Round(time.Millisecond), err, errors.Is(err, ErrLocked))
	if err != nil && !errors.Is(err, ErrLocked) {
		t.Errorf("vacuum under a held write lock: %v, not ErrLocked", err)
	}
}

// SessionConversationRoot stops after 100 steps: in a conversation of
// more than 101 sessions, the tip and an early session resolve different
// "roots", so two holders get the turn lease of one conversation.
func TestTurnLease_OneRootForALongConversation(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
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

// the write pass re-reads a regular file in place: a file changed after
// validation is written unvalidated (here truncated: s2 silently loses rows).
func TestImport_WritesWhatItChecked(t *testing.T) {
	ctx := t.Context()
	a := openTestStore(t, Options{})
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
	b := openTestStore(t, Options{})
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
