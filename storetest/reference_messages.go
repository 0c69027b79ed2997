package storetest

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// referenceFields is what a message carries of the reference store's
// last fields.
type referenceFields struct {
	Content, Reasoning, ReasoningContent, EffectDisposition string
	Observed                                                bool
}

func referenceFieldsOf(ms []Message) []referenceFields {
	out := make([]referenceFields, len(ms))
	for i, m := range ms {
		out[i] = referenceFields{m.Content, m.Reasoning, m.ReasoningContent, m.EffectDisposition, m.Observed}
	}
	return out
}

// testMessage_ObservedEffectAndReasoningContent: a message keeps its
// observed mark, a tool result its effect disposition, and a provider's
// reasoning_content stays apart from reasoning — through an append, a
// read, a compaction's copy and an export imported into another store.
// An effect disposition on anything but a tool result, and reasoning on a
// note, are refused.
func testMessage_ObservedEffectAndReasoningContent(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	in := []NewMessage{
		{Role: RoleUser, Content: "someone else's line", Observed: true},
		{Role: RoleAssistant, Content: "calling", Reasoning: "think", ReasoningContent: "provider's own reasoning",
			ToolCalls: []ToolCall{{ID: "c1", Name: "rm", Arguments: "{}"}}},
		{Role: RoleTool, Content: "removed", ToolName: "rm", ToolCallID: "c1", EffectDisposition: "applied"},
		{Role: RoleAssistant, Content: "done", ReasoningContent: "only content"},
	}
	if _, err := s.AppendMessages(ctx, "s", in); err != nil {
		t.Fatal(err)
	}
	want := []referenceFields{
		{Content: "someone else's line", Observed: true},
		{Content: "calling", Reasoning: "think", ReasoningContent: "provider's own reasoning"},
		{Content: "removed", EffectDisposition: "applied"},
		{Content: "done", ReasoningContent: "only content"},
	}
	got, err := s.Messages(ctx, "s", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, referenceFieldsOf(got)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if _, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleTool, Content: "removed", ToolName: "rm", ToolCallID: "c1",
		EffectDisposition: "rejected", IdempotencyKey: "k"}); err != nil {
		t.Fatal(err)
	}
	var conflict *IdempotencyConflictError
	if _, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleTool, Content: "removed", ToolName: "rm", ToolCallID: "c1",
		EffectDisposition: "applied", IdempotencyKey: "k"}); !errors.As(err, &conflict) || conflict.Field != "effect disposition" {
		t.Errorf("a retry with another disposition = %v, want an *IdempotencyConflictError on the effect disposition", err)
	}
	for name, m := range map[string]NewMessage{
		"disposition on a user message": {Role: RoleUser, Content: "x", EffectDisposition: "applied"},
		"reasoning content on a note":   {Role: RoleNote, Content: "x", ReasoningContent: "r"},
		"disposition not UTF-8":         {Role: RoleTool, Content: "x", EffectDisposition: "a\xffb"},
	} {
		if _, err := s.AppendMessage(ctx, "s", m); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", name, err)
		}
	}

	// A compaction's copies keep the fields (the rows above its watermark
	// are copied after the summary).
	holder := LockFor(t, s, "s")
	if _, err := s.CompactSession(ctx, "s", Compaction{Holder: holder, Watermark: got[0].ID,
		Messages: []NewMessage{{Role: RoleUser, Content: "summary", Summary: true}}}); err != nil {
		t.Fatalf("CompactSession: %v", err)
	}
	copies, err := s.Messages(ctx, "s", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var live []Message
	for _, m := range copies {
		if m.State == StateActive && m.OriginID != 0 {
			live = append(live, m)
		}
	}
	if diff := cmp.Diff(append(slices.Clone(want[1:]), referenceFields{Content: "removed", EffectDisposition: "rejected"}), referenceFieldsOf(live)); diff != "" {
		t.Errorf("compaction copies (-want +got):\n%s", diff)
	}

	// Export into another store: every row keeps them, in every state.
	var buf bytes.Buffer
	if _, err := s.Export(ctx, &buf, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"effect_disposition":"applied"`) {
		t.Errorf("the export carries no effect disposition:\n%s", buf.String())
	}
	other := open(t, Options{})
	if _, err := other.Import(ctx, &buf, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	all := func(s *Store) []referenceFields {
		ms, err := s.Messages(ctx, "s", MessageQuery{IncludeRewound: true})
		if err != nil {
			t.Fatal(err)
		}
		return referenceFieldsOf(ms)
	}
	if diff := cmp.Diff(all(s), all(other)); diff != "" {
		t.Errorf("imported (-exported +imported):\n%s", diff)
	}
}

// testReplaceMessages: a fork replaces the live conversation in one
// step — the old active rows rewound (out of the conversation and out of
// search), compacted rows kept, the new set appended under the keys the
// old one held, the counters recomputed — and refuses, changing nothing,
// a stale view, another's lease, and a session compression closed.
func testReplaceMessages(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	old, err := s.AppendMessages(ctx, "s", []NewMessage{
		{Role: RoleUser, Content: "first question", IdempotencyKey: "k1", PlatformMessageID: "p1"},
		{Role: RoleAssistant, Content: "rambling answer", ToolCalls: []ToolCall{{ID: "c", Name: "ls", Arguments: "{}"}}},
		{Role: RoleTool, Content: "a b", ToolName: "ls", ToolCallID: "c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	before := Contents(t, s, "s")
	if _, err := s.ReplaceMessages(ctx, "s", nil, ReplaceOptions{ExpectedActiveIDs: old[:2]}); !errors.Is(err, ErrConflict) {
		t.Errorf("a stale view: %v, want ErrConflict", err)
	}
	if _, ok, err := s.AcquireTurnLease(ctx, "s", "other-worker", 0); err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	if _, err := s.ReplaceMessages(ctx, "s", nil, ReplaceOptions{}); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("under another's lease: %v, want ErrLeaseHeld", err)
	}
	if diff := cmp.Diff(before, Contents(t, s, "s")); diff != "" {
		t.Fatalf("a refused replacement changed the session (-before +after):\n%s", diff)
	}
	ids, err := s.ReplaceMessages(ctx, "s", []NewMessage{
		{Role: RoleUser, Content: "first question", IdempotencyKey: "k1", PlatformMessageID: "p1"},
		{Role: RoleAssistant, Content: "short answer"},
	}, ReplaceOptions{ExpectedActiveIDs: old, LeaseHolder: "other-worker"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || slices.Contains(old, ids[0]) || ids[0] <= old[2] {
		t.Errorf("new ids %v, want two new rows after %v", ids, old)
	}
	wantAll := []string{"rewound:first question", "rewound:rambling answer", "rewound:a b",
		"active:first question", "active:short answer"}
	if diff := cmp.Diff(wantAll, Contents(t, s, "s")); diff != "" {
		t.Errorf("after the replacement (-want +got):\n%s", diff)
	}
	sess, err := s.Session(ctx, "s")
	if err != nil || sess.MessageCount != 2 || sess.ToolCallCount != 0 {
		t.Errorf("session = %d messages, %d tool calls, %v; want 2 and 0", sess.MessageCount, sess.ToolCallCount, err)
	}
	if hits, err := s.Search(ctx, "rambling", SearchOptions{}); err != nil || len(hits) != 0 {
		t.Errorf("search for a replaced message = %v, %v; want nothing", hits, err)
	}
	// The same key again is a retry of the new row, not of the old one.
	again, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleUser, Content: "first question", IdempotencyKey: "k1", PlatformMessageID: "p1"})
	if err != nil || again != ids[0] {
		t.Errorf("retrying the key = %d, %v; want %d", again, err, ids[0])
	}
	if _, err := s.ReplaceMessages(ctx, "nope", nil, ReplaceOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v, want ErrNotFound", err)
	}
	if _, err := s.ReplaceMessages(ctx, "s", []NewMessage{{Role: "robot"}}, ReplaceOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a bad message: %v, want ErrInvalidInput", err)
	}

	// A session compression closed is replaced in its continuation.
	newTestSession(t, s, "p")
	AppendTexts(t, s, "p", "hello")
	h := LockFor(t, s, "p")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Child: NewSession{ID: "p2"}, Holder: h,
		Messages: []NewMessage{{Role: RoleUser, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReplaceMessages(ctx, "p", nil, ReplaceOptions{}); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("a compressed session: %v, want ErrSessionClosed", err)
	}
}

// testScrubMemoryContext: leaked memory-context blocks are cut from the
// content and text parts of a session's messages on request, in every
// state, and search no longer finds them; an unclosed tag and other
// sessions are left alone.
func testScrubMemoryContext(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	newTestSession(t, s, "other")
	leak := "<memory-context>\nuser likes zebrafish\n</memory-context>\n\n"
	if _, err := s.AppendMessages(ctx, "s", []NewMessage{
		{Role: RoleUser, Content: leak + "what should I cook?"},
		{Role: RoleAssistant, Content: "pasta"},
		{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "and " + leak + "dessert?"}}},
		{Role: RoleUser, Content: "a lone <memory-context> tag stays"},
	}); err != nil {
		t.Fatal(err)
	}
	AppendTexts(t, s, "other", leak+"kept")
	n, err := s.ScrubMemoryContext(ctx, "s")
	if err != nil || n != 2 {
		t.Fatalf("ScrubMemoryContext = %d, %v; want 2 messages changed", n, err)
	}
	got, err := s.Messages(ctx, "s", MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, m := range got {
		contents = append(contents, m.Content)
	}
	want := []string{"what should I cook?", "pasta", "and dessert?", "a lone <memory-context> tag stays"}
	if diff := cmp.Diff(want, contents); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Part{{Type: PartText, Text: "and dessert?"}}, got[2].Parts, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
	hits, err := s.Search(ctx, "zebrafish", SearchOptions{})
	if err != nil || len(hits) != 1 || hits[0].SessionID != "other" {
		t.Errorf("search after the scrub = %+v, %v; want only the other session's message", hits, err)
	}
	if n, err := s.ScrubMemoryContext(ctx, "s"); err != nil || n != 0 {
		t.Errorf("a second scrub = %d, %v; want 0", n, err)
	}
	if _, err := s.ScrubMemoryContext(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v, want ErrNotFound", err)
	}
}
