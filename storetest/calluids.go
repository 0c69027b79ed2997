package storetest

import (
	"bytes"
	"regexp"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// Message identity's leftovers (issue 35, digest §1 and §15): per-call UIDs
// paired onto results and kept by every copy, and UIDs for rows written
// before there were any.

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// exchange appends a user turn, an assistant calling two tools, and both
// results, and returns their ids.
func exchange(t *testing.T, s *Store, sid, callA, callB string) []int64 {
	t.Helper()
	ids, err := s.AppendMessages(t.Context(), sid, []NewMessage{
		{Role: RoleUser, Content: "look"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: callA, Name: "ls", Arguments: "{}"}, {ID: callB, Name: "cat", Arguments: "{}"}}},
		{Role: RoleTool, ToolCallID: callA, Content: "a.txt"},
		{Role: RoleTool, ToolCallID: callB, Content: "hello"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// pairs reads a session's conversation as "content>call UID" for each
// tool result and "calls:uid,uid" for each assistant with calls.
func pairs(t *testing.T, ms []Message) (out []string) {
	t.Helper()
	for _, m := range ms {
		switch {
		case m.Role == RoleTool:
			out = append(out, m.Content+">"+m.CallUID)
		case len(m.ToolCalls) > 0:
			line := "calls:"
			for _, c := range m.ToolCalls {
				if !hex32.MatchString(c.UID) {
					t.Errorf("call %s of message %d: UID %q", c.ID, m.ID, c.UID)
				}
				line += c.UID + ","
			}
			out = append(out, line)
		}
	}
	return out
}

// testToolCallUIDs_PairedOntoResults: each call gets its own UID at
// append, each result reads its call's, on every read (a page without the
// call, one message), a reused provider id pairs per exchange, and a
// retry of the append is the same message.
func testToolCallUIDs_PairedOntoResults(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c")
	first := exchange(t, s, "c", "terminal:0", "terminal:1")
	second := exchange(t, s, "c", "terminal:0", "terminal:1") // a provider that reuses its ids
	all, err := s.Messages(ctx, "c", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	a1, a2 := all[1].ToolCalls, all[5].ToolCalls
	if a1[0].UID == a1[1].UID || a1[0].UID == a2[0].UID {
		t.Fatalf("call UIDs not one per call: %+v %+v", a1, a2)
	}
	want := []string{"calls:" + a1[0].UID + "," + a1[1].UID + ",", "a.txt>" + a1[0].UID, "hello>" + a1[1].UID,
		"calls:" + a2[0].UID + "," + a2[1].UID + ",", "a.txt>" + a2[0].UID, "hello>" + a2[1].UID}
	if diff := cmp.Diff(want, pairs(t, all)); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}
	conv, _ := s.Conversation(ctx, "c", ConversationOptions{})
	if diff := cmp.Diff(want, pairs(t, conv)); diff != "" {
		t.Errorf("Conversation (-want +got):\n%s", diff)
	}
	line, _ := s.Conversation(ctx, "c", ConversationOptions{Lineage: true})
	if diff := cmp.Diff(want, pairs(t, line)); diff != "" {
		t.Errorf("display transcript (-want +got):\n%s", diff)
	}
	page, _ := s.Messages(ctx, "c", MessageQuery{AfterID: second[1]}) // the calls are on an earlier page
	newest, _ := s.Messages(ctx, "c", MessageQuery{NewestFirst: true, Limit: 1})
	one, _ := s.Message(ctx, first[3])
	got := []string{page[0].CallUID, page[1].CallUID, newest[0].CallUID, one.CallUID}
	if diff := cmp.Diff([]string{a2[0].UID, a2[1].UID, a2[1].UID, a1[1].UID}, got); diff != "" {
		t.Errorf("results read without their call (-want +got):\n%s", diff)
	}
	// A retry of an append with calls is the same message, not a conflict.
	m := NewMessage{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "x", Name: "f"}}, IdempotencyKey: "k"}
	id1, err1 := s.AppendMessage(ctx, "c", m)
	id2, err2 := s.AppendMessage(ctx, "c", m)
	if err1 != nil || err2 != nil || id1 != id2 {
		t.Errorf("retry with tool calls: %d %v, %d %v", id1, err1, id2, err2)
	}
	// A result whose call no stored message made pairs with nothing.
	orphan, _ := s.AppendMessage(ctx, "c", NewMessage{Role: RoleTool, ToolCallID: "nobody", Content: "?"})
	if m, _ := s.Message(ctx, orphan); m.CallUID != "" {
		t.Errorf("orphan result paired with %q", m.CallUID)
	}
}

// testToolCallUIDs_KeptByEveryCopy: the carried tail of a compaction (with
// the call compacted and its results carried), a continuation's copy (the
// call left in the parent), ReplaceMessages of AsNew copies, export and
// import: each keeps the calls' UIDs and each result's pairing.
func testToolCallUIDs_KeptByEveryCopy(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "p")
	ids := exchange(t, s, "p", "c1", "c2")
	orig, _ := s.Conversation(ctx, "p", ConversationOptions{})
	want := pairs(t, orig)
	h := LockFor(t, s, "p")
	// Compaction: the user turn and the call compacted, both results carried.
	if _, err := s.CompactSession(ctx, "p", Compaction{Holder: h, Held: ids[:2],
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	live, _ := s.Conversation(ctx, "p", ConversationOptions{})
	if diff := cmp.Diff(want[1:], pairs(t, live)); diff != "" {
		t.Errorf("carried results (-want +got):\n%s", diff)
	}
	// Continuation: the results copied into the child, their call not.
	more := exchange(t, s, "p", "c3", "c4")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: more[1], Child: NewSession{ID: "k"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "handoff", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	parent, _ := s.Conversation(ctx, "p", ConversationOptions{})
	child, _ := s.Conversation(ctx, "k", ConversationOptions{})
	pp, cp := pairs(t, parent), pairs(t, child)
	if len(cp) != 2 || len(pp) < 5 || cp[0] != pp[3] || cp[1] != pp[4] {
		t.Errorf("continuation's copies %q, want the parent's pairing %q", cp, pp)
	}
	// ReplaceMessages of the session's own messages, copied with AsNew.
	var rebuilt []NewMessage
	for _, m := range child {
		rebuilt = append(rebuilt, m.AsNew())
	}
	if _, err := s.ReplaceMessages(ctx, "k", rebuilt, ReplaceOptions{}); err != nil {
		t.Fatal(err)
	}
	replaced, _ := s.Conversation(ctx, "k", ConversationOptions{})
	if diff := cmp.Diff(cp, pairs(t, replaced)); diff != "" {
		t.Errorf("after ReplaceMessages (-want +got):\n%s", diff)
	}
	for i := range child {
		if replaced[i].UID != child[i].UID {
			t.Errorf("message %d: UID %q after ReplaceMessages, want %q", i, replaced[i].UID, child[i].UID)
		}
	}
	// Export and import into another store.
	var buf bytes.Buffer
	if _, err := s.Export(ctx, &buf, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	d := open(t, Options{})
	if _, err := d.Import(ctx, &buf, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{"p", "k"} {
		a, _ := s.Messages(ctx, sid, MessageQuery{IncludeRewound: true})
		b, _ := d.Messages(ctx, sid, MessageQuery{IncludeRewound: true})
		if diff := cmp.Diff(pairs(t, a), pairs(t, b)); diff != "" {
			t.Errorf("%s after export and import (-want +got):\n%s", sid, diff)
		}
	}
}

// testLegacyUIDs_DerivedOnRead: a row written before UIDs existed (uid
// NULL, calls stored without UIDs) reads with UIDs derived from its
// original's id: the same on every read, shared by a compaction's copy,
// paired onto its results, and kept by export and import. No read writes
// them.
func testLegacyUIDs_DerivedOnRead(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	newTestSession(t, s, "old")
	ids := exchange(t, s, "old", "c1", "c2")
	e.Exec(t, s, "UPDATE messages SET uid = NULL WHERE session_id = $1", "old")
	e.Exec(t, s, `UPDATE messages SET tool_calls_json = $1 WHERE id = $2`,
		`[{"id":"c1","name":"ls","arguments":"{}"},{"id":"c2","name":"cat","arguments":"{}"}]`, ids[1])
	a, _ := s.Messages(ctx, "old", MessageQuery{})
	b, _ := s.Messages(ctx, "old", MessageQuery{})
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two reads of legacy rows differ:\n%s", diff)
	}
	seen := map[string]bool{}
	for _, m := range a {
		if !hex32.MatchString(m.UID) || seen[m.UID] {
			t.Errorf("legacy message %d: UID %q (twice: %v)", m.ID, m.UID, seen[m.UID])
		}
		seen[m.UID] = true
	}
	want := pairs(t, a) // checks the calls' derived UIDs are well formed
	if want[1] != "a.txt>"+a[1].ToolCalls[0].UID || want[2] != "hello>"+a[1].ToolCalls[1].UID {
		t.Errorf("legacy pairing %q", want)
	}
	h := LockFor(t, s, "old")
	res, err := s.CompactSession(ctx, "old", Compaction{Holder: h, Held: ids[:1],
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}})
	if err != nil {
		t.Fatal(err)
	}
	copyOf, _ := s.Message(ctx, res.Carried[0])
	if copyOf.UID != a[1].UID || !cmp.Equal(copyOf.ToolCalls, a[1].ToolCalls) {
		t.Errorf("carried copy of a legacy row: %q %+v, want %q %+v", copyOf.UID, copyOf.ToolCalls, a[1].UID, a[1].ToolCalls)
	}
	live, _ := s.Conversation(ctx, "old", ConversationOptions{})
	if diff := cmp.Diff(want, pairs(t, live)); diff != "" {
		t.Errorf("carried legacy rows (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if _, err := s.Export(ctx, &buf, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	d := e.Open(t, Options{})
	if _, err := d.Import(ctx, &buf, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	x, _ := s.Messages(ctx, "old", MessageQuery{IncludeRewound: true})
	y, _ := d.Messages(ctx, "old", MessageQuery{IncludeRewound: true})
	uids := func(ms []Message) (out []string) {
		for _, m := range ms {
			out = append(out, m.UID)
		}
		return out
	}
	if diff := cmp.Diff(uids(x), uids(y)); diff != "" {
		t.Errorf("legacy UIDs after export and import (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(pairs(t, x), pairs(t, y)); diff != "" {
		t.Errorf("legacy pairing after export and import (-want +got):\n%s", diff)
	}
}
