package storetest

import (
	"bytes"
	_ "embed"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// shapedMessage uses every field of the message shape, with the bytes a
// store must not touch: a NUL byte and emoji in parts, an inline data: URL
// image, tool input, part attributes and metadata whose key order and
// spacing are the provider's. Content is given (not derived) so that the NUL stays in the
// parts, which every engine can hold as JSON.
func shapedMessage() NewMessage {
	return NewMessage{
		Role:    RoleAssistant,
		Content: "Here is the chart 👩‍💻",
		Parts: []Part{
			{Type: PartText, Text: "Here is the chart\x00 👩‍💻 ✅", ItemID: "msg_1",
				Attributes: "{\"phase\": \"commentary\",\"annotations\":[{\"type\":\"url_citation\", \"title\":\"ü\\u00e9\"}] }"},
			{Type: PartImage, MediaType: "image/png", URL: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==", Detail: "high",
				Attributes: `{"cache_control":{"type":"ephemeral","ttl":"1h"}}`},
			{Type: PartFile, MediaType: "application/pdf", BlobID: "blob-7", Name: "report.pdf"},
			{Type: PartToolUse, ToolCallID: "toolu_01", Name: "plot", Input: "{\"z\": [3, 1],  \"a\" :{\"b\":\"\\u00e9\"}}"},
			{Type: PartToolResult, ToolCallID: "toolu_01", Text: "ok <b>&</b>", IsError: true},
		},
		Model:             "claude-sonnet-4",
		CreatedAt:         time.Date(2025, 3, 4, 5, 6, 7, 891_000_000, time.UTC),
		PlatformMessageID: "tg-5001",
		Metadata:          "{\"z\":1,  \"a\" : [\"ü\", null]}",
		ReasoningDetails:  `[{"type":"thinking","thinking":"hm","signature":"EqQB+/=="}]`,
	}
}

// checkShape compares a stored message with what was appended, field by
// field the shape adds.
func checkShape(t *testing.T, what string, got Message, want NewMessage) {
	t.Helper()
	if diff := cmp.Diff(want.Parts, got.Parts, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: parts (-appended +stored):\n%s", what, diff)
	}
	if got.Model != want.Model || got.Metadata != want.Metadata || got.PlatformMessageID != want.PlatformMessageID ||
		got.ReasoningDetails != want.ReasoningDetails {
		t.Errorf("%s: model %q metadata %q platform id %q details %q; want %q %q %q %q", what, got.Model, got.Metadata,
			got.PlatformMessageID, got.ReasoningDetails, want.Model, want.Metadata, want.PlatformMessageID, want.ReasoningDetails)
	}
	if !want.CreatedAt.IsZero() && !got.CreatedAt.Equal(want.CreatedAt.Truncate(time.Millisecond)) {
		t.Errorf("%s: created at %v, want %v", what, got.CreatedAt, want.CreatedAt.Truncate(time.Millisecond))
	}
}

func testMessageShape_RoundTripsByteExact(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	m := shapedMessage()
	id, err := s.AppendMessage(ctx, "s", m)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := s.Messages(ctx, "s", MessageQuery{})
	if err != nil || len(listed) != 1 {
		t.Fatalf("Messages: %v (%d rows)", err, len(listed))
	}
	checkShape(t, "Messages", listed[0], m)
	one, err := s.Message(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	checkShape(t, "Message", one, m)
	if one.Content != m.Content {
		t.Errorf("content %q, want the one given %q", one.Content, m.Content)
	}
	// Tool calls follow from the tool_use parts.
	if want := []ToolCall{{ID: "toolu_01", Name: "plot", Arguments: m.Parts[3].Input}}; !cmp.Equal(one.ToolCalls, want, ignoreUIDs) {
		t.Errorf("tool calls %+v, want %+v", one.ToolCalls, want)
	}
	if sess, _ := s.Session(ctx, "s"); sess.ToolCallCount != 1 {
		t.Errorf("tool call count %d, want 1", sess.ToolCallCount)
	}
	// Content left empty is the parts' plain text.
	plain := NewMessage{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "look"}, {Type: PartImage, MediaType: "image/jpeg", BlobID: "b1"},
		{Type: PartText, Text: "at this 📷"}}}
	id, err = s.AppendMessage(ctx, "s", plain)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Message(ctx, id)
	if got.Content != "look\nat this 📷" || got.Model != "" || got.Metadata != "" || got.PlatformMessageID != "" {
		t.Errorf("derived content %q, model %q, metadata %q, platform id %q", got.Content, got.Model, got.Metadata, got.PlatformMessageID)
	}
	checkShape(t, "plain parts", got, plain)
	// Attributes are kept, not searched: only the text is.
	for q, want := range map[string]int{"commentary": 0, "ephemeral": 0, "chart": 1} {
		if hits, err := s.Search(ctx, q, SearchOptions{}); err != nil || len(hits) != want {
			t.Errorf("Search(%q) = %d hits, %v; want %d", q, len(hits), err, want)
		}
	}
	// A message without parts reads back without them.
	id, _ = s.AppendMessage(ctx, "s", NewMessage{Role: RoleUser, Content: "just text"})
	if got, _ := s.Message(ctx, id); got.Parts != nil {
		t.Errorf("a message appended as content has parts %+v", got.Parts)
	}
}

// The caller's time is kept (to the millisecond) and informs only: the
// conversation stays in the order of the appends.
func testAppendMessage_CreatedAtGivenOrNow(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	late := time.Date(2025, 1, 2, 3, 4, 5, 678_901_234, time.FixedZone("X", 3600))
	early := time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)
	before := time.Now().Truncate(time.Millisecond)
	ids, err := s.AppendMessages(ctx, "s", []NewMessage{
		{Role: RoleUser, Content: "a", CreatedAt: late},
		{Role: RoleUser, Content: "b"},
		{Role: RoleUser, Content: "c", CreatedAt: early},
		{Role: RoleUser, Content: "d", CreatedAt: time.Unix(0, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	ms, err := s.Messages(ctx, "s", MessageQuery{})
	if err != nil || len(ms) != 4 {
		t.Fatalf("Messages: %v (%d)", err, len(ms))
	}
	var order []string
	for i, m := range ms {
		order = append(order, m.Content)
		if m.ID != ids[i] {
			t.Errorf("row %d has id %d, want %d", i, m.ID, ids[i])
		}
	}
	if !cmp.Equal(order, []string{"a", "b", "c", "d"}) {
		t.Errorf("order %v, want the order of the appends", order)
	}
	if want := late.Truncate(time.Millisecond); !ms[0].CreatedAt.Equal(want) {
		t.Errorf("given time stored as %v, want %v", ms[0].CreatedAt, want)
	}
	if ms[1].CreatedAt.Before(before) || ms[1].CreatedAt.After(after) {
		t.Errorf("zero time stored as %v, want now (%v..%v)", ms[1].CreatedAt, before, after)
	}
	if !ms[2].CreatedAt.Equal(early) || !ms[3].CreatedAt.Equal(time.Unix(0, 0)) {
		t.Errorf("early times stored as %v and %v", ms[2].CreatedAt, ms[3].CreatedAt)
	}
	// A retry with the time it first gave is the same message; another
	// time is not.
	m := NewMessage{Role: RoleUser, Content: "e", CreatedAt: late, IdempotencyKey: "k"}
	id, err := s.AppendMessage(ctx, "s", m)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.AppendMessage(ctx, "s", m); err != nil || again != id {
		t.Errorf("retry with the same time = %d, %v; want %d", again, err, id)
	}
	m.CreatedAt = early
	var conflict *IdempotencyConflictError
	if _, err := s.AppendMessage(ctx, "s", m); !errors.As(err, &conflict) || conflict.Field != "creation time" {
		t.Errorf("retry with another time = %v, want a conflict on the creation time", err)
	}
}

func messageCount(t *testing.T, s *Store, sessionID string) (counted int64, rows int) {
	t.Helper()
	sess, err := s.Session(t.Context(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := s.Messages(t.Context(), sessionID, MessageQuery{IncludeRewound: true})
	if err != nil {
		t.Fatal(err)
	}
	return sess.MessageCount, len(ms)
}

// A chat platform's message id names one message of a session: a webhook
// delivered again is the same message, answered with its id.
func testAppendMessage_PlatformIDRedelivery(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	newTestSession(t, s, "other")
	m := NewMessage{Role: RoleUser, Content: "hello", PlatformMessageID: "tg-1", Metadata: `{"chat":42}`}
	id, err := s.AppendMessage(ctx, "s", m)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.AppendMessage(ctx, "s", m); err != nil || again != id {
		t.Fatalf("re-delivery = %d, %v; want %d", again, err, id)
	}
	if counted, rows := messageCount(t, s, "s"); counted != 1 || rows != 1 {
		t.Errorf("after a re-delivery: %d counted, %d rows; want 1 and 1", counted, rows)
	}

	conflict := func(what string, err error, key, pid, field string, msgID int64) {
		t.Helper()
		var c *IdempotencyConflictError
		if !errors.As(err, &c) || !errors.Is(err, ErrIdempotencyConflict) {
			t.Fatalf("%s: %v, want an *IdempotencyConflictError", what, err)
		}
		if c.Key != key || c.PlatformMessageID != pid || c.Field != field || c.MessageID != msgID {
			t.Errorf("%s: %+v, want key %q platform id %q field %q message %d", what, c, key, pid, field, msgID)
		}
		if pid != "" && !strings.Contains(err.Error(), "platform message id") {
			t.Errorf("%s: %q does not say the platform message id matched", what, err)
		}
	}
	changed := m
	changed.Content = "edited"
	_, err = s.AppendMessage(ctx, "s", changed)
	conflict("another message under the platform id", err, "", "tg-1", "content", id)
	changed = m
	changed.Metadata = `{"chat":43}`
	_, err = s.AppendMessage(ctx, "s", changed)
	conflict("other metadata under the platform id", err, "", "tg-1", "metadata", id)

	// Within one batch the second is a re-delivery of the first.
	two := NewMessage{Role: RoleUser, Content: "twice", PlatformMessageID: "tg-2"}
	ids, err := s.AppendMessages(ctx, "s", []NewMessage{two, two})
	if err != nil || len(ids) != 2 || ids[0] != ids[1] {
		t.Fatalf("one batch, one platform id twice = %v, %v; want the same id twice", ids, err)
	}
	three := NewMessage{Role: RoleUser, Content: "three", PlatformMessageID: "tg-3"}
	threeEdited := three
	threeEdited.Content = "three, edited"
	_, err = s.AppendMessages(ctx, "s", []NewMessage{three, threeEdited})
	var c *IdempotencyConflictError
	if !errors.As(err, &c) || c.PlatformMessageID != "tg-3" || c.Field != "content" {
		t.Errorf("one batch, two messages under one platform id = %v, want a conflict on tg-3", err)
	}
	if counted, rows := messageCount(t, s, "s"); counted != 2 || rows != 2 {
		t.Errorf("after the batches: %d counted, %d rows; want 2 and 2 (a refused batch writes nothing)", counted, rows)
	}

	// Another session may hold the same platform id.
	otherID, err := s.AppendMessage(ctx, "other", m)
	if err != nil || otherID == id {
		t.Errorf("the same platform id in another session = %d, %v; want a new message", otherID, err)
	}

	// With an idempotency key: the key is asked first; the platform id
	// only when the key names nothing — so a re-delivery under a fresh key
	// is still recognised.
	fresh := m
	fresh.IdempotencyKey = "delivery-2"
	if got, err := s.AppendMessage(ctx, "s", fresh); err != nil || got != id {
		t.Errorf("re-delivery under a fresh key = %d, %v; want %d", got, err, id)
	}
	keyed := NewMessage{Role: RoleUser, Content: "keyed", IdempotencyKey: "k", PlatformMessageID: "tg-4"}
	keyedID, err := s.AppendMessage(ctx, "s", keyed)
	if err != nil {
		t.Fatal(err)
	}
	moved := keyed
	moved.PlatformMessageID = "tg-5"
	_, err = s.AppendMessage(ctx, "s", moved)
	conflict("the key's message under another platform id", err, "k", "", "platform message id", keyedID)
	freshEdited := fresh
	freshEdited.IdempotencyKey, freshEdited.Content = "delivery-3", "edited"
	_, err = s.AppendMessage(ctx, "s", freshEdited)
	conflict("a fresh key, a taken platform id, another message", err, "", "tg-1", "content", id)
	if counted, rows := messageCount(t, s, "s"); counted != 3 || rows != 3 {
		t.Errorf("at the end: %d counted, %d rows; want 3 and 3", counted, rows)
	}

	// A rewound message keeps its platform id: its re-delivery is answered,
	// not appended as new.
	target, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleUser, Content: "undo me", PlatformMessageID: "tg-6"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RewindTo(ctx, "s", target, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleUser, Content: "undo me", PlatformMessageID: "tg-6"}); err != nil || got != target {
		t.Errorf("re-delivery of a rewound message = %d, %v; want %d", got, err, target)
	}
}

// Webhooks delivered at once, many times over: one message, one id.
func testAppendMessage_ConcurrentRedeliveries(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	m := NewMessage{Role: RoleUser, Content: "once", PlatformMessageID: "wh-1"}
	const n = 8
	ids := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ids[i], errs[i] = s.AppendMessage(ctx, "s", m) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Errorf("delivery %d = %d, %v; want %d", i, ids[i], errs[i], ids[0])
		}
	}
	if counted, rows := messageCount(t, s, "s"); counted != 1 || rows != 1 {
		t.Errorf("%d concurrent deliveries: %d counted, %d rows; want 1 and 1", n, counted, rows)
	}
}

// What the shape refuses is refused typed, and nothing of the batch is
// written.
func testAppendMessage_ShapeRefusals(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	tests := []struct {
		name string
		m    NewMessage
	}{
		{"MetadataArray", NewMessage{Metadata: `[1]`}},
		{"MetadataNumber", NewMessage{Metadata: `1`}},
		{"MetadataString", NewMessage{Metadata: `"x"`}},
		{"MetadataNull", NewMessage{Metadata: `null`}},
		{"MetadataNotJSON", NewMessage{Metadata: `{a:1}`}},
		{"MetadataTrailing", NewMessage{Metadata: `{"a":1} {}`}},
		{"MetadataNotUTF8", NewMessage{Metadata: "{\"a\":\"\xff\"}"}},
		{"PartUnknownType", NewMessage{Parts: []Part{{Type: "video"}}}},
		{"ImageWithoutMediaType", NewMessage{Parts: []Part{{Type: PartImage, URL: "https://x/y.png"}}}},
		{"ImageURLAndBlob", NewMessage{Parts: []Part{{Type: PartImage, MediaType: "image/png", URL: "https://x/y.png", BlobID: "b"}}}},
		{"ToolUseInputNotJSON", NewMessage{Parts: []Part{{Type: PartToolUse, ToolCallID: "c", Name: "n", Input: "{"}}}},
		{"PartAttributesArray", NewMessage{Parts: []Part{{Type: PartText, Text: "t", Attributes: `[{"phase":"commentary"}]`}}}},
		{"PartAttributesNotJSON", NewMessage{Parts: []Part{{Type: PartText, Text: "t", Attributes: `{"phase"`}}}},
		{"TextPartWithURL", NewMessage{Parts: []Part{{Type: PartText, Text: "t", URL: "https://x"}}}},
		{"ToolCallsDisagree", NewMessage{Parts: []Part{{Type: PartToolUse, ToolCallID: "c", Name: "n"}},
			ToolCalls: []ToolCall{{ID: "d", Name: "n"}}}},
		{"CreatedBefore1970", NewMessage{CreatedAt: time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)}},
		{"CreatedAfter9999", NewMessage{CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"CreatedTwoDaysAhead", NewMessage{CreatedAt: time.Now().Add(48 * time.Hour)}},
		{"PlatformIDTooLong", NewMessage{PlatformMessageID: strings.Repeat("9", 1025)}},
		{"ModelNotUTF8", NewMessage{Model: "\xff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.m
			m.Role = RoleUser
			if m.Content == "" && len(m.Parts) == 0 {
				m.Content = "x"
			}
			if err := m.Validate(); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Validate = %v, want ErrInvalidInput", err)
			}
			_, err := s.AppendMessages(ctx, "s", []NewMessage{{Role: RoleUser, Content: "fine"}, m})
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("append = %v, want ErrInvalidInput", err)
			}
			if counted, rows := messageCount(t, s, "s"); counted != 0 || rows != 0 {
				t.Errorf("a refused batch wrote: %d counted, %d rows", counted, rows)
			}
		})
	}
}

// A compression's copies are the same messages: parts, model, metadata,
// reasoning details and platform id go with them.
func testCompression_CopiesKeepTheMessageShape(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	AppendTexts(t, s, "s", "old turn")
	h := LockFor(t, s, "s")
	w, err := s.ActiveWatermark(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	m := shapedMessage()
	orig, err := s.AppendMessage(ctx, "s", m) // above the watermark: carried
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CompactSession(ctx, "s", Compaction{Holder: h, Watermark: w,
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true}}})
	if err != nil || len(res.Carried) != 1 {
		t.Fatalf("compact: %+v, %v", res, err)
	}
	cp, err := s.Message(ctx, res.Carried[0])
	if err != nil {
		t.Fatal(err)
	}
	checkShape(t, "compaction copy", cp, m)
	if was, _ := s.Message(ctx, orig); was.PlatformMessageID != "" || was.State != StateRewound {
		t.Errorf("retired original: state %s, platform id %q; want rewound, its id handed to the copy", was.State, was.PlatformMessageID)
	}
	if got, err := s.AppendMessage(ctx, "s", m); err != nil || got != cp.ID {
		t.Errorf("re-delivery after the compaction = %d, %v; want the copy %d", got, err, cp.ID)
	}

	// A compressor's own messages take no platform id: a kept turn
	// holding its original's would match the original just compacted (a
	// "re-delivery", never inserted), a summary holding a carried one's
	// would give the child two rows with it. Refused, nothing written.
	w, _ = s.ActiveWatermark(ctx, "s")
	late := NewMessage{Role: RoleUser, Content: "late", PlatformMessageID: "tg-late"}
	if _, err := s.AppendMessage(ctx, "s", late); err != nil {
		t.Fatal(err)
	}
	_, err = s.PublishCompressionChild(ctx, "s", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "bad"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true, PlatformMessageID: "tg-late"}}})
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a summary holding a carried message's platform id = %v, want ErrInvalidInput", err)
	}
	if _, err := s.Session(ctx, "bad"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused child exists: %v", err)
	}
	before, err := s.Messages(ctx, "s", MessageQuery{IncludeRewound: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CompactSession(ctx, "s", Compaction{Holder: h, Watermark: w, Messages: []NewMessage{
		{Role: RoleAssistant, Content: "summary", Summary: true},
		{Role: RoleUser, Content: "late", PlatformMessageID: "tg-late"}}})
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a kept turn holding its original's platform id = %v, want ErrInvalidInput", err)
	}
	if after, _ := s.Messages(ctx, "s", MessageQuery{IncludeRewound: true}); !cmp.Equal(before, after) {
		t.Errorf("the refused compaction changed the session:\n%s", cmp.Diff(before, after))
	}

	// A continuation's copies keep it all too, the platform id included
	// (the child is another session); the parent keeps its own.
	child, err := s.PublishCompressionChild(ctx, "s", Continuation{Holder: h, Watermark: res.IDs[0], Child: NewSession{ID: "s-2"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary 2", Summary: true}}})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := s.Messages(ctx, child.ID, MessageQuery{})
	if err != nil || len(ms) != 3 {
		t.Fatalf("child rows: %v (%d), want summary, the carried copy and late", err, len(ms))
	}
	checkShape(t, "continuation copy", ms[1], m)
	if ms[2].PlatformMessageID != "tg-late" {
		t.Errorf("late row's copy has platform id %q", ms[2].PlatformMessageID)
	}
	if kept, _ := s.Message(ctx, cp.ID); kept.PlatformMessageID != m.PlatformMessageID {
		t.Errorf("the parent's row lost its platform id: %q", kept.PlatformMessageID)
	}
}

// Export then import keeps every field of the shape, and exports the
// same bytes again.
func testExportImport_KeepsTheMessageShape(t *testing.T, open Opener) {
	ctx := t.Context()
	a := open(t, Options{})
	newTestSession(t, a, "s")
	m := shapedMessage()
	plain := NewMessage{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "derived"}}, Model: "m2", PlatformMessageID: "tg-2"}
	if _, err := a.AppendMessages(ctx, "s", []NewMessage{m, plain}); err != nil {
		t.Fatal(err)
	}
	first := exportAll(t, a)
	b := open(t, Options{})
	if res, err := b.Import(ctx, bytes.NewReader(first), ImportOptions{}); err != nil || res.Imported != 1 {
		t.Fatalf("import: %+v, %v", res, err)
	}
	if second := exportAll(t, b); !bytes.Equal(first, second) {
		t.Errorf("round trip differs:\n%s\nwant\n%s", second, first)
	}
	want, _ := a.Messages(ctx, "s", MessageQuery{})
	got, _ := b.Messages(ctx, "s", MessageQuery{})
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Message{}, "ID"), ignoreUIDs); diff != "" {
		t.Errorf("imported messages differ (-exported +imported):\n%s", diff)
	}
	// The imported session holds the platform ids as the original did.
	if id, err := b.AppendMessage(ctx, "s", plain); err != nil || id != got[1].ID {
		t.Errorf("re-delivery into the imported session = %d, %v; want %d", id, err, got[1].ID)
	}
	// Importing the same file again tops up nothing and changes nothing.
	if res, err := b.Import(ctx, bytes.NewReader(first), ImportOptions{}); err != nil || res.Imported != 0 {
		t.Errorf("second import: %+v, %v", res, err)
	}
	// A file naming one platform id twice in a session is refused whole.
	dup := bytes.Replace(first, []byte(`"platform_message_id":"tg-2"`), []byte(`"platform_message_id":"tg-5001"`), 1)
	if bytes.Equal(dup, first) {
		t.Fatal("the test did not plant a duplicate platform id")
	}
	c := open(t, Options{})
	if _, err := c.Import(ctx, bytes.NewReader(dup), ImportOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a platform id twice in a session = %v, want ErrInvalidInput", err)
	}
	if all, _ := c.ListSessions(ctx, SessionFilter{}); len(all) != 0 {
		t.Errorf("a refused file wrote %d sessions", len(all))
	}
}

// exportBeforeMessageShape is an export written by sessiondb before the
// message shape (FillRich's store, as that version exported it).
//
//go:embed testdata/export-v1-before-message-shape.jsonl
var exportBeforeMessageShape []byte

// An export from before the message shape imports whole, its messages
// without the new fields, and exports again to the same bytes but for
// the UID each message was given on import (there were none then) and
// the UID its tool call reads with (derived from its row: a call stored
// without one).
func testImport_ExportFromBeforeTheMessageShape(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	res, err := s.Import(ctx, bytes.NewReader(exportBeforeMessageShape), ImportOptions{})
	if err != nil || res.Imported != 3 {
		t.Fatalf("import: %+v, %v", res, err)
	}
	minted := regexp.MustCompile(`,"uid":"[0-9a-f]{32}"`)
	got := exportAll(t, s)
	if n, want := len(minted.FindAll(got, -1)), bytes.Count(exportBeforeMessageShape, []byte(`"type":"message"`))+
		bytes.Count(exportBeforeMessageShape, []byte(`{"id":"c1",`)); n != want {
		t.Errorf("%d messages and calls got a UID, want %d", n, want)
	}
	if got := minted.ReplaceAll(got, nil); !bytes.Equal(got, exportBeforeMessageShape) {
		t.Errorf("export after import differs:\n%s\nwant\n%s", got, exportBeforeMessageShape)
	}
	ms, err := s.Messages(ctx, "root", MessageQuery{IncludeRewound: true})
	if err != nil || len(ms) != 7 {
		t.Fatalf("root: %v (%d messages, want 7)", err, len(ms))
	}
	calls := ms[1]
	if calls.Content != "checking" || len(calls.ToolCalls) != 1 || calls.ToolCalls[0].Arguments != `{"q":"kyoto"}` ||
		calls.Reasoning != "need data" || calls.TokenCount != 12 {
		t.Errorf("the tool-calling message read as %+v", calls)
	}
	for _, m := range ms {
		if m.Parts != nil || m.Model != "" || m.Metadata != "" || m.PlatformMessageID != "" || m.ReasoningDetails != "" {
			t.Errorf("message %d gained fields the file does not have: %+v", m.ID, m)
		}
	}
	if ms[0].Content != "plan a trip to 京都" || ms[0].IdempotencyKey != "k1" || ms[0].State != StateCompacted {
		t.Errorf("first message read as %+v", ms[0])
	}
	conv, err := s.Conversation(ctx, "root-2", ConversationOptions{})
	if err != nil || len(conv) != 3 {
		t.Errorf("root-2's conversation: %v (%d messages, want 3)", err, len(conv))
	}
}

// An imported message given only as parts is filled in as an append
// fills it: its plain text and the tool calls of its tool_use parts, so
// the calls are counted and searchable; importing the file again finds
// the same messages, not a divergence.
func testImport_PartsFillContentAndToolCalls(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	file := []byte(`{"type":"header","format":"sessiondb-export","version":1}
{"type":"session","id":"p","source":"cli","started_at":1796138909332,"title_rank":0,"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"api_call_count":0,"estimated_cost_usd":0,"actual_cost_usd":0,"archived":false,"pinned":false,"hidden":false,"rewind_count":0}
{"type":"message","session_id":"p","seq":1,"role":"assistant","content":"","state":"active","created_at":1796138909333,"parts":[{"type":"text","text":"Looking."},{"type":"tool_use","name":"grep_repo","tool_call_id":"c1","input":"{\"q\":\"okapi\"}"}]}
`)
	if res, err := s.Import(ctx, bytes.NewReader(file), ImportOptions{}); err != nil || res.Imported != 1 {
		t.Fatalf("import: %+v, %v", res, err)
	}
	ms, err := s.Messages(ctx, "p", MessageQuery{})
	if err != nil || len(ms) != 1 {
		t.Fatalf("messages: %v (%d)", err, len(ms))
	}
	want := []ToolCall{{ID: "c1", Name: "grep_repo", Arguments: `{"q":"okapi"}`}}
	if ms[0].Content != "Looking." || !cmp.Equal(ms[0].ToolCalls, want, ignoreUIDs) {
		t.Errorf("imported message: content %q, tool calls %+v; want %q and %+v", ms[0].Content, ms[0].ToolCalls, "Looking.", want)
	}
	if sess, err := s.Session(ctx, "p"); err != nil || sess.ToolCallCount != 1 {
		t.Errorf("session tool call count %d, %v; want 1", sess.ToolCallCount, err)
	}
	if hits, err := s.Search(ctx, "grep_repo", SearchOptions{}); err != nil || len(hits) != 1 {
		t.Errorf("Search(grep_repo) = %v, %v; want the imported call", hits, err)
	}
	res, err := s.Import(ctx, bytes.NewReader(file), ImportOptions{})
	if err != nil || res.Imported != 0 || len(res.Skips) != 0 {
		t.Errorf("importing the same file again: %+v, %v; want nothing imported and no skip", res, err)
	}
}
