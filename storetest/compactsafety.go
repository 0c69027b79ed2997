package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// Compaction safety (issue 35, digest §4): only what the compactor held is
// archived, what arrived meanwhile is carried, one live result per call,
// and a guarded commit refuses a transcript that moved.

// testCompactKeepingLast_CarriesRowsAppendedDuringTheSummary: appenders
// write concurrently while the summarizer works; every row they wrote is
// live after the summary, in each appender's order, and only the rows the
// summarizer was given are compacted.
func testCompactKeepingLast_CarriesRowsAppendedDuringTheSummary(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c")
	AppendTexts(t, s, "c", "q1", "a1", "q2", "a2")
	const writers, each = 3, 4
	var summarised []string
	h := NewHolder("compactor")
	res, err := s.CompactKeepingLast(ctx, "c", h, KeepPolicy{Turns: 2}, func(ctx context.Context, ms []Message) (string, error) {
		for _, m := range ms {
			summarised = append(summarised, m.Content)
		}
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					if _, err := s.AppendMessage(ctx, "c", NewMessage{Role: RoleUser, Content: fmt.Sprintf("late-%d-%d", w, i)}); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			return "", err
		}
		return "summary", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"q1", "a1"}, summarised); diff != "" {
		t.Errorf("summarised (-want +got):\n%s", diff)
	}
	if res.Compacted != 2 || len(res.Carried) != 2+writers*each {
		t.Errorf("result %+v: want 2 compacted, %d carried", res, 2+writers*each)
	}
	live, err := s.Conversation(ctx, "c", ConversationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	next := map[int]int{}
	for i, m := range live {
		got = append(got, m.Content)
		var w, n int
		if _, err := fmt.Sscanf(m.Content, "late-%d-%d", &w, &n); err == nil {
			if n != next[w] {
				t.Errorf("row %d %q: writer %d's rows out of order", i, m.Content, w)
			}
			next[w]++
		}
	}
	if len(live) != 3+writers*each || !slices.Equal(got[:3], []string{"summary", "q2", "a2"}) {
		t.Errorf("live conversation %q: want the summary, the kept turn, then all %d late rows", got, writers*each)
	}
	for w := range writers {
		if next[w] != each {
			t.Errorf("writer %d: %d of %d rows live", w, next[w], each)
		}
	}
}

// testCompactKeepingLast_ArchivesOnlyTheRowsItRead: a row that becomes
// visible while the summary is written, with an id below the rows the
// compactor read (on PostgreSQL a transaction that took its id earlier
// commits later; here another writer makes it active), is carried after
// the summary, never compacted unseen.
func testCompactKeepingLast_ArchivesOnlyTheRowsItRead(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	newTestSession(t, s, "c")
	ids := AppendTexts(t, s, "c", "q1", "unseen", "a1", "q2", "a2")
	e.Exec(t, s, "UPDATE messages SET state = 'rewound' WHERE id = $1", ids[1])
	var summarised []string
	_, err := s.CompactKeepingLast(ctx, "c", NewHolder("compactor"), KeepPolicy{Turns: 2}, func(_ context.Context, ms []Message) (string, error) {
		for _, m := range ms {
			summarised = append(summarised, m.Content)
		}
		e.Exec(t, s, "UPDATE messages SET state = 'active' WHERE id = $1", ids[1]) // the late commit
		return "summary", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"q1", "a1"}, summarised); diff != "" {
		t.Errorf("summarised (-want +got):\n%s", diff)
	}
	want := []string{"compacted:q1", "rewound:unseen", "compacted:a1", "rewound:q2", "rewound:a2",
		"active:summary", "active:unseen", "active:q2", "active:a2"}
	if diff := cmp.Diff(want, Contents(t, s, "c")); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// testCompactSession_HeldRows: with Held, only the held rows are
// compacted; a foreign row between them stays live after the new rows; a
// held row another writer took away refuses the whole compaction.
func testCompactSession_HeldRows(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c")
	ids := AppendTexts(t, s, "c", "a", "foreign", "b", "tail")
	h := LockFor(t, s, "c")
	summary := []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}

	for name, c := range map[string]Compaction{
		"held and watermark":  {Holder: h, Held: []int64{ids[0]}, Watermark: ids[0], Messages: summary},
		"non-positive held":   {Holder: h, Held: []int64{0}, Messages: summary},
		"held row not active": {Holder: h, Held: []int64{ids[0], 1 << 40}, Messages: summary},
	} {
		_, err := s.CompactSession(ctx, "c", c)
		want := ErrInvalidInput
		if name == "held row not active" {
			want = ErrConflict
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	before := Contents(t, s, "c")
	if diff := cmp.Diff([]string{"active:a", "active:foreign", "active:b", "active:tail"}, before); diff != "" {
		t.Fatalf("refusals changed rows:\n%s", diff)
	}
	res, err := s.CompactSession(ctx, "c", Compaction{Holder: h, Held: []int64{ids[0], ids[2]}, Messages: summary})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"compacted:a", "rewound:foreign", "compacted:b", "rewound:tail", "active:sum", "active:foreign", "active:tail"}
	if diff := cmp.Diff(want, Contents(t, s, "c")); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if res.Compacted != 2 || len(res.Carried) != 2 {
		t.Errorf("result %+v: want 2 compacted, 2 carried", res)
	}
	// The held rows are compacted now: holding them again is refused.
	if _, err := s.CompactSession(ctx, "c", Compaction{Holder: h, Held: []int64{ids[0]}, Messages: summary}); !errors.Is(err, ErrConflict) {
		t.Errorf("held rows another commit archived: %v, want ErrConflict", err)
	}
}

// testCompactSession_GuardedCommit: the expected active ids and another
// writer's turn lease refuse a compaction atomically; the compressor's
// own turn does not.
func testCompactSession_GuardedCommit(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c")
	ids := AppendTexts(t, s, "c", "a", "b")
	h := LockFor(t, s, "c")
	summary := []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}
	late := AppendTexts(t, s, "c", "late")
	before := Contents(t, s, "c")
	if _, err := s.CompactSession(ctx, "c", Compaction{Holder: h, Watermark: ids[1], ExpectedActiveIDs: ids, Messages: summary}); !errors.Is(err, ErrConflict) {
		t.Errorf("active rows changed since read: %v, want ErrConflict", err)
	}
	if _, _, err := s.AcquireTurnLease(ctx, "c", "agent", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompactSession(ctx, "c", Compaction{Holder: h, Watermark: ids[1], TurnHolder: h, Messages: summary}); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("another writer's turn: %v, want ErrLeaseHeld", err)
	}
	if _, err := s.CompactSession(ctx, "c", Compaction{Holder: "stranger", Watermark: ids[1], Messages: summary}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("another's compression lock: %v, want ErrLeaseLost", err)
	}
	if diff := cmp.Diff(before, Contents(t, s, "c")); diff != "" {
		t.Fatalf("refused compactions changed rows:\n%s", diff)
	}
	all := append(slices.Clone(ids), late...)
	if _, err := s.CompactSession(ctx, "c", Compaction{Holder: h, Watermark: ids[1], ExpectedActiveIDs: all,
		TurnHolder: "agent", Messages: summary}); err != nil {
		t.Fatalf("the turn's own compaction, transcript as read: %v", err)
	}
	if diff := cmp.Diff([]string{"compacted:a", "compacted:b", "rewound:late", "active:sum", "active:late"}, Contents(t, s, "c")); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// testCompactSession_OneLiveResultPerToolCall: a compaction that keeps a
// tool result verbatim which the carried tail also holds is refused, and
// changes nothing; results of a reused provider call id are one per call;
// duplicates the transcript already had are carried through.
func testCompactSession_OneLiveResultPerToolCall(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c")
	ids, err := s.AppendMessages(ctx, "c", []NewMessage{
		{Role: RoleUser, Content: "run it twice"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "terminal:0", Name: "sh", Arguments: "{}"}}},
		{Role: RoleTool, ToolCallID: "terminal:0", Content: "first"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "terminal:0", Name: "sh", Arguments: "{}"}}},
		{Role: RoleTool, ToolCallID: "terminal:0", Content: "second"},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := LockFor(t, s, "c")
	result, _ := s.Message(ctx, ids[4])
	before := Contents(t, s, "c")
	_, err = s.CompactSession(ctx, "c", Compaction{Holder: h, Watermark: ids[2], Messages: []NewMessage{
		{Role: RoleAssistant, Content: "sum", Summary: true}, result.AsNew()}})
	var dup *DuplicateToolResultError
	if !errors.As(err, &dup) || !errors.Is(err, ErrConflict) || dup.ToolCallID != "terminal:0" || dup.CallUID != result.CallUID || dup.Results != 2 {
		t.Errorf("a kept result also carried: %v (%+v), want *DuplicateToolResultError for %s", err, dup, result.CallUID)
	}
	if diff := cmp.Diff(before, Contents(t, s, "c")); diff != "" {
		t.Fatalf("the refused compaction changed rows:\n%s", diff)
	}
	// A reused provider id is two calls: carrying both exchanges is fine.
	if _, err := s.CompactSession(ctx, "c", Compaction{Holder: h, Watermark: ids[0], Messages: []NewMessage{
		{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatalf("carrying two exchanges of a reused call id: %v", err)
	}
	// A legacy transcript with two results of one call is carried as it is.
	newTestSession(t, s, "old")
	if _, err := s.AppendMessages(ctx, "old", []NewMessage{
		{Role: RoleUser, Content: "q"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "f"}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "r"},
		{Role: RoleTool, ToolCallID: "c1", Content: "r again"},
	}); err != nil {
		t.Fatal(err)
	}
	ho := LockFor(t, s, "old")
	w, _ := s.ActiveWatermark(ctx, "old")
	if _, err := s.CompactSession(ctx, "old", Compaction{Holder: ho, Watermark: w - 3, Messages: []NewMessage{
		{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Errorf("carrying a duplicate the transcript already had: %v", err)
	}
}
