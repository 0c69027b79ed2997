package storetest

import (
	"bytes"
	"errors"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	. "github.com/sessiondb/sessiondb/store"
)

// displayTexts names each item of a display transcript: a message as
// session:content, a receipt as /command.
func displayTexts(items []DisplayItem) []string {
	out := []string{}
	for _, it := range items {
		if it.Receipt != nil {
			out = append(out, "/"+it.Receipt.Command)
			continue
		}
		out = append(out, it.Message.SessionID+":"+it.Message.Content)
	}
	return out
}

func messageTexts(ms []Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.SessionID+":"+m.Content)
	}
	return out
}

// displayConversation builds p (a, b, a hidden scaffold, a receipt, and
// "tail" appended during the summary) continued in c (the summary, the
// carried tail, "next", a note, a receipt).
func displayConversation(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	newTestSession(t, s, "p")
	AppendTexts(t, s, "p", "a", "b")
	if _, err := s.AppendMessage(ctx, "p", NewMessage{Role: RoleSystem, Content: "scaffold", DisplayKind: DisplayHidden}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordCommandReceipt(ctx, "p", NewCommandReceipt{ID: "r1", Command: "/model", Output: "switched"}); err != nil {
		t.Fatal(err)
	}
	h := LockFor(t, s, "p")
	w, _ := s.ActiveWatermark(ctx, "p")
	AppendTexts(t, s, "p", "tail")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseCompressionLock(ctx, "p", h); err != nil {
		t.Fatal(err)
	}
	AppendTexts(t, s, "c", "next")
	if _, err := s.AppendMessage(ctx, "c", NewMessage{Role: RoleNote, Content: "a note"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordCommandReceipt(ctx, "c", NewCommandReceipt{ID: "r2", Command: "usage", Output: "12 tokens"}); err != nil {
		t.Fatal(err)
	}
}

// testDisplay_TwoProjectionsAgree: the model transcript is the session's
// active rows, hidden ones included, receipts and notes never; every
// display read (DisplayTranscript, DisplayPage page by page and from the
// newest, Conversation with Lineage) gives the same items in the same
// order, each turn once, receipts in their place, hidden rows never.
func testDisplay_TwoProjectionsAgree(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	displayConversation(t, s)

	model, err := s.Conversation(ctx, "p", ConversationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"p:a", "p:b", "p:scaffold", "p:tail"}, messageTexts(model)); diff != "" {
		t.Errorf("model transcript of p (-want +got):\n%s", diff)
	}
	want := []string{"p:a", "p:b", "/model", "c:tail", "c:sum", "c:next", "c:a note", "/usage"}
	var all []DisplayItem
	for it, err := range s.DisplayTranscript(ctx, "c") {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, it)
	}
	if diff := cmp.Diff(want, displayTexts(all)); diff != "" {
		t.Errorf("DisplayTranscript (-want +got):\n%s", diff)
	}
	for _, from := range []string{"p", "c"} {
		var paged []DisplayItem
		for off := 0; ; off += 3 {
			pg, err := s.DisplayPage(ctx, from, DisplayPageOptions{Limit: 3, Offset: off})
			if err != nil {
				t.Fatal(err)
			}
			if pg.RootID != "p" || pg.TipID != "c" || pg.Total != len(want) || pg.Offset != min(off, len(want)) {
				t.Errorf("page at %d from %s: root %q tip %q total %d offset %d", off, from, pg.RootID, pg.TipID, pg.Total, pg.Offset)
			}
			if len(pg.Items) == 0 {
				break
			}
			paged = append(paged, pg.Items...)
		}
		if diff := cmp.Diff(want, displayTexts(paged)); diff != "" {
			t.Errorf("pages from %s (-want +got):\n%s", from, diff)
		}
	}
	latest, err := s.DisplayPage(ctx, "p", DisplayPageOptions{Limit: 3, Latest: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[len(want)-3:], displayTexts(latest.Items)); diff != "" || latest.Offset != len(want)-3 {
		t.Errorf("latest page at %d (-want +got):\n%s", latest.Offset, diff)
	}
	lineage, err := s.Conversation(ctx, "c", ConversationOptions{Lineage: true, IncludeNotes: true})
	if err != nil {
		t.Fatal(err)
	}
	var wantMessages []string
	for _, w := range want {
		if w[0] != '/' {
			wantMessages = append(wantMessages, w)
		}
	}
	if diff := cmp.Diff(wantMessages, messageTexts(lineage)); diff != "" {
		t.Errorf("Conversation(Lineage) (-want +got):\n%s", diff)
	}
	audit, err := s.DisplayPage(ctx, "c", DisplayPageOptions{IncludeHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := displayTexts(audit.Items); len(got) != len(want)+1 || got[2] != "p:scaffold" {
		t.Errorf("IncludeHidden: %q", got)
	}

	// Receipts are never messages: not counted, not searched.
	for _, id := range []string{"p", "c"} {
		sess, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if id == "c" && sess.MessageCount != 4 { // sum, tail, next, the note
			t.Errorf("c counts %d messages", sess.MessageCount)
		}
	}
	if hits, err := s.Search(ctx, "switched", SearchOptions{}); err != nil || len(hits) != 0 {
		t.Errorf("search finds a receipt's output: %v %v", hits, err)
	}

	for _, o := range []DisplayPageOptions{{Limit: -1}, {Limit: 1001}, {Offset: -1}} {
		if _, err := s.DisplayPage(ctx, "c", o); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("DisplayPage(%+v): %v, want ErrInvalidInput", o, err)
		}
	}
	if _, err := s.DisplayPage(ctx, "nope", DisplayPageOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

// testDisplay_DedupeBeforePaging: a compaction's carried copies are one
// turn with their originals (the copy keeps the original's UID), shown at
// the original's place; pages of one item each step through the turns,
// never repeating or skipping one.
func testDisplay_DedupeBeforePaging(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	ids := AppendTexts(t, s, "s", "A", "B")
	h := LockFor(t, s, "s")
	w, _ := s.ActiveWatermark(ctx, "s")
	AppendTexts(t, s, "s", "C") // arrives during the summary: carried after it
	res, err := s.CompactSession(ctx, "s", Compaction{Holder: h, Watermark: w,
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Carried) != 1 {
		t.Fatalf("carried %v", res.Carried)
	}
	a, _ := s.Message(ctx, ids[0])
	carried, _ := s.Message(ctx, res.Carried[0])
	if carried.UID == "" || carried.Content != "C" {
		t.Fatalf("carried copy %+v", carried)
	}
	if carried.UID == a.UID {
		t.Error("two turns share a UID")
	}
	var got []string
	for off := 0; ; off++ {
		pg, err := s.DisplayPage(ctx, "s", DisplayPageOptions{Limit: 1, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		if len(pg.Items) == 0 {
			break
		}
		got = append(got, displayTexts(pg.Items)...)
	}
	if diff := cmp.Diff([]string{"s:A", "s:B", "s:C", "s:sum"}, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	model, _ := s.Conversation(ctx, "s", ConversationOptions{})
	if diff := cmp.Diff([]string{"s:sum", "s:C"}, messageTexts(model)); diff != "" {
		t.Errorf("model (-want +got):\n%s", diff)
	}
}

// testDisplay_CommandReceipts: a receipt is idempotent by its id (a retry
// returns the first record and moves nothing), refuses a reused id with
// another payload or session, a command that is not one token, bad text
// and an unknown session, and is shown after the message that was newest
// when it was recorded — even once that message is rewound.
func testDisplay_CommandReceipts(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	newTestSession(t, s, "other")
	early, err := s.RecordCommandReceipt(ctx, "s", NewCommandReceipt{ID: "e", Command: "help", Output: "…"})
	if err != nil || early.AfterMessageID != 0 {
		t.Fatalf("receipt before any message: %+v %v", early, err)
	}
	ids := AppendTexts(t, s, "s", "q1")
	first, err := s.RecordCommandReceipt(ctx, "s", NewCommandReceipt{ID: "k", Command: "/model", Output: "gpt"})
	if err != nil || first.AfterMessageID != ids[0] || first.Command != "model" {
		t.Fatalf("RecordCommandReceipt: %+v %v", first, err)
	}
	before, _ := s.Session(ctx, "s")
	again, err := s.RecordCommandReceipt(ctx, "s", NewCommandReceipt{ID: "k", Command: "model", Output: "gpt"})
	if err != nil || !cmp.Equal(first, again) {
		t.Errorf("retry: %+v %v, want %+v", again, err, first)
	}
	if after, _ := s.Session(ctx, "s"); after.DisplayRevision != before.DisplayRevision {
		t.Errorf("a retried receipt moved the revision %d -> %d", before.DisplayRevision, after.DisplayRevision)
	}
	cases := []struct {
		name string
		sid  string
		r    NewCommandReceipt
		want error
	}{
		{"same id, other output", "s", NewCommandReceipt{ID: "k", Command: "model", Output: "claude"}, ErrIdempotencyConflict},
		{"same id, other command", "s", NewCommandReceipt{ID: "k", Command: "usage", Output: "gpt"}, ErrIdempotencyConflict},
		{"same id, other session", "other", NewCommandReceipt{ID: "k", Command: "model", Output: "gpt"}, ErrIdempotencyConflict},
		{"two tokens", "s", NewCommandReceipt{ID: "x", Command: "model gpt", Output: ""}, ErrInvalidInput},
		{"empty command", "s", NewCommandReceipt{ID: "x", Command: "/", Output: ""}, ErrInvalidInput},
		{"empty id", "s", NewCommandReceipt{Command: "model"}, ErrInvalidInput},
		{"output not UTF-8", "s", NewCommandReceipt{ID: "x", Command: "model", Output: "\xff"}, ErrInvalidInput},
		{"unknown session", "nope", NewCommandReceipt{ID: "y", Command: "model"}, ErrNotFound},
	}
	for _, c := range cases {
		if _, err := s.RecordCommandReceipt(ctx, c.sid, c.r); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	ids2 := AppendTexts(t, s, "s", "q2", "q3")
	if _, err := s.RewindTo(ctx, "s", ids2[0], RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordCommandReceipt(ctx, "s", NewCommandReceipt{ID: "last", Command: "undo", Output: "ok"}); err != nil {
		t.Fatal(err)
	}
	pg, err := s.DisplayPage(ctx, "s", DisplayPageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/help", "s:q1", "/model", "/undo"}, displayTexts(pg.Items)); diff != "" {
		t.Errorf("display (-want +got):\n%s", diff)
	}
	rs, err := s.CommandReceipts(ctx, "s")
	if err != nil || len(rs) != 3 {
		t.Errorf("CommandReceipts: %d %v", len(rs), err)
	}
	if _, err := s.DeleteSession(ctx, "s", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordCommandReceipt(ctx, "other", NewCommandReceipt{ID: "k", Command: "model", Output: "gpt"}); err != nil {
		t.Errorf("an id is free again once its session is deleted: %v", err)
	}
}

// testDisplay_RevisionMovesOncePerVisibleChange: a session's display
// revision moves by exactly one for each visible change (an append, a
// batch, a receipt, a compaction, a rewind, an import) and not at all for
// anything else (title, pin, archive, read flags, a refused append, a
// retried one); the conversation's revision follows, and changes when a
// session joins the lineage.
func testDisplay_RevisionMovesOncePerVisibleChange(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	last := int64(0)
	lastRev, _ := s.DisplayRevision(ctx, "s")
	step := func(what string, moves bool, do func() error) {
		t.Helper()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		sess, err := s.Session(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		rev, err := s.DisplayRevision(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		want := last
		if moves {
			want++
		}
		if sess.DisplayRevision != want || (rev != lastRev) != moves {
			t.Errorf("%s: counter %d, want %d; revision changed %v, want %v", what, sess.DisplayRevision, want, rev != lastRev, moves)
		}
		last, lastRev = sess.DisplayRevision, rev
	}
	var ids []int64
	step("append", true, func() error {
		_, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleUser, Content: "hi", IdempotencyKey: "k1"})
		return err
	})
	step("retried append", false, func() error {
		_, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleUser, Content: "hi", IdempotencyKey: "k1"})
		return err
	})
	step("refused append", false, func() error {
		_, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleUser, Content: "other", IdempotencyKey: "k1"})
		if !errors.Is(err, ErrIdempotencyConflict) {
			return err
		}
		return nil
	})
	step("batch of three", true, func() (err error) {
		ids, err = s.AppendMessages(ctx, "s", []NewMessage{{Role: RoleUser, Content: "1"}, {Role: RoleAssistant, Content: "2"}, {Role: RoleUser, Content: "3"}})
		return err
	})
	step("empty batch", false, func() error { _, err := s.AppendMessages(ctx, "s", nil); return err })
	step("title", false, func() error { return s.SetTitle(ctx, "s", "A title") })
	step("pin", false, func() error { _, err := s.SetPinned(ctx, "s", true); return err })
	step("archive", false, func() error { _, err := s.SetArchived(ctx, "s", true); return err })
	step("read flag", false, func() error { _, err := s.MarkRead(ctx, "s", true); return err })
	step("receipt", true, func() error {
		_, err := s.RecordCommandReceipt(ctx, "s", NewCommandReceipt{ID: "r", Command: "model", Output: "x"})
		return err
	})
	step("rewind", true, func() error { _, err := s.RewindTo(ctx, "s", ids[2], RewindOptions{}); return err })
	step("compaction", true, func() error {
		h := LockFor(t, s, "s")
		w, _ := s.ActiveWatermark(ctx, "s")
		_, err := s.CompactSession(ctx, "s", Compaction{Holder: h, Watermark: w,
			Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}})
		if err == nil {
			_, err = s.ReleaseCompressionLock(ctx, "s", h)
		}
		return err
	})

	// A session joining the lineage changes the conversation's revision;
	// the publish moves the child's counter once, not the parent's.
	h := LockFor(t, s, "s")
	w, _ := s.ActiveWatermark(ctx, "s")
	before, _ := s.DisplayRevision(ctx, "s")
	if _, err := s.PublishCompressionChild(ctx, "s", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "handoff", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	after, _ := s.DisplayRevision(ctx, "s")
	fromChild, _ := s.DisplayRevision(ctx, "c")
	if after == before || after != fromChild {
		t.Errorf("publish: revision %q -> %q (child reads %q)", before, after, fromChild)
	}
	if p, _ := s.Session(ctx, "s"); p.DisplayRevision != last {
		t.Errorf("publish moved the parent's counter %d -> %d", last, p.DisplayRevision)
	}
	if c, _ := s.Session(ctx, "c"); c.DisplayRevision != 1 {
		t.Errorf("the child's counter after its publish: %d", c.DisplayRevision)
	}

	// An import is one change of each session it writes.
	var buf bytes.Buffer
	if _, err := s.Export(ctx, &buf, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	d := open(t, Options{})
	if _, err := d.Import(ctx, &buf, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s", "c"} {
		if sess, err := d.Session(ctx, id); err != nil || sess.DisplayRevision != 1 {
			t.Errorf("imported %s: counter %d, %v", id, sess.DisplayRevision, err)
		}
	}
}

// testDisplay_UnchangedPageReadsNoRows: a page asked with the current
// revision says Unchanged and reads no message — shown by a message row
// planted undecodable behind the store's back (no revision moves): the
// unchanged read succeeds, a full read fails on the row.
func testDisplay_UnchangedPageReadsNoRows(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	newTestSession(t, s, "s")
	ids := AppendTexts(t, s, "s", "a", "b")
	pg, err := s.DisplayPage(ctx, "s", DisplayPageOptions{})
	if err != nil || pg.Unchanged || len(pg.Items) != 2 {
		t.Fatalf("first page: %+v %v", pg, err)
	}
	for _, known := range []string{"", "stale", pg.Revision[:len(pg.Revision)-1]} {
		if p, err := s.DisplayPage(ctx, "s", DisplayPageOptions{KnownRevision: known}); err != nil || p.Unchanged {
			t.Errorf("known revision %q: unchanged %v, %v", known, p.Unchanged, err)
		}
	}
	e.Exec(t, s, "UPDATE messages SET parts_json = 'not json' WHERE id = $1", ids[0])
	defer e.Exec(t, s, "UPDATE messages SET parts_json = NULL WHERE id = $1", ids[0])
	same, err := s.DisplayPage(ctx, "s", DisplayPageOptions{KnownRevision: pg.Revision})
	if err != nil || !same.Unchanged || same.Items != nil || same.Revision != pg.Revision || same.TipID != "s" {
		t.Errorf("unchanged page: %+v %v", same, err)
	}
	if _, err := s.DisplayPage(ctx, "s", DisplayPageOptions{}); err == nil {
		t.Error("a full read of the planted row succeeded: the test proves nothing")
	}
}

// testDisplay_KindAndUIDKeptByEveryCopy: a message's UID is minted at
// append (32 hex digits; identical twins get two), and with its display
// kind is kept by a compaction's carried copy, a continuation's copy, and
// an export and import into another store.
func testDisplay_KindAndUIDKeptByEveryCopy(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	twins, err := s.AppendMessages(ctx, "p", []NewMessage{{Role: RoleUser, Content: "same"}, {Role: RoleUser, Content: "same"}})
	if err != nil {
		t.Fatal(err)
	}
	m0, _ := s.Message(ctx, twins[0])
	m1, _ := s.Message(ctx, twins[1])
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(m0.UID) || m0.UID == m1.UID {
		t.Errorf("twins' UIDs %q %q", m0.UID, m1.UID)
	}
	h := LockFor(t, s, "p")
	w, _ := s.ActiveWatermark(ctx, "p")
	late, err := s.AppendMessage(ctx, "p", NewMessage{Role: RoleAssistant, Content: "banner", DisplayKind: "banner"})
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := s.Message(ctx, late)
	res, err := s.CompactSession(ctx, "p", Compaction{Holder: h, Watermark: w,
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}})
	if err != nil {
		t.Fatal(err)
	}
	carried, _ := s.Message(ctx, res.Carried[0])
	if carried.UID != orig.UID || carried.DisplayKind != "banner" {
		t.Errorf("carried copy: uid %q kind %q, want %q banner", carried.UID, carried.DisplayKind, orig.UID)
	}
	w, _ = s.ActiveWatermark(ctx, "p")
	tail, err := s.AppendMessage(ctx, "p", NewMessage{Role: RoleUser, Content: "t", DisplayKind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	tm, _ := s.Message(ctx, tail)
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "h", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	child, _ := s.Conversation(ctx, "c", ConversationOptions{})
	if len(child) != 2 || child[1].UID != tm.UID || child[1].DisplayKind != "k" {
		t.Errorf("continuation's copy: %+v", child)
	}

	var buf bytes.Buffer
	if _, err := s.Export(ctx, &buf, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	d := open(t, Options{})
	if _, err := d.Import(ctx, &buf, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{"p", "c"} {
		a, _ := s.Messages(ctx, sid, MessageQuery{IncludeRewound: true})
		b, _ := d.Messages(ctx, sid, MessageQuery{IncludeRewound: true})
		key := func(ms []Message) (out []string) {
			for _, m := range ms {
				out = append(out, m.Content+"|"+m.UID+"|"+m.DisplayKind)
			}
			return out
		}
		if diff := cmp.Diff(key(a), key(b)); diff != "" {
			t.Errorf("%s after export and import (-want +got):\n%s", sid, diff)
		}
	}
	if _, err := s.AppendMessage(ctx, "c", NewMessage{Role: RoleUser, Content: "x", DisplayKind: "bad kind\n"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a display kind with a newline: %v", err)
	}
}
