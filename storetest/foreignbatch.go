package storetest

import (
	"errors"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

// A foreign import's batch (WriteForeignBatch, what package hermes writes
// with) looks its keys and platform ids up for the whole batch: a key the
// batch repeats, a platform id it repeats, a state it changes twice and a
// value JSON cannot carry must all come out as one message at a time
// would have them.
func testWriteForeignBatch_RepeatsWithinTheBatch(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	str := func(v string) *string { return &v }
	msg := func(key, pid, state, content string) ForeignMessage {
		m := ForeignMessage{Role: "user", Content: content, State: state, IdempotencyKey: str(key), CreatedAt: 1_700_000_000_000}
		if pid != "" {
			m.PlatformMessageID = str(pid)
		}
		return m
	}
	batch := ForeignBatch{Origin: "test", First: true, New: true, Last: true, Fingerprint: "f1",
		Session: ForeignSession{Row: ForeignSessionRow{ID: "f", Source: "test", StartedAt: 1_700_000_000_000}},
		Messages: []ForeignMessage{
			msg("k1", "p1", "active", "one"),
			msg("k2", "p1", "active", "two: p1 is the first's"),
			msg("k1", "", "compacted", "one again: its state"),
			msg("k3", "p3", "active", "three"),
		}}
	res, err := s.WriteForeignBatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 3 || res.Restated != 1 {
		t.Errorf("first write: %d messages, %d restated; want 3 and 1", res.Messages, res.Restated)
	}
	got, err := s.Messages(ctx, "f", MessageQuery{IncludeRewound: true})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ content, state, pid, meta string }
	want := []row{{"one", "compacted", "p1", ""}, {"two: p1 is the first's", "active", "", `{"duplicate_platform_message_id":"p1"}`},
		{"three", "active", "p3", ""}}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i, m := range got {
		if r := (row{m.Content, string(m.State), m.PlatformMessageID, m.Metadata}); r != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, r, want[i])
		}
	}

	// Again, as a resumed import: every key is found; k1's state moves to
	// active and back to compacted, each change read by the next.
	batch.First, batch.New = true, false
	if res, err = s.WriteForeignBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if res.Messages != 0 || res.Restated != 2 {
		t.Errorf("second write: %d messages, %d restated; want 0 and 2", res.Messages, res.Restated)
	}
	if got, err = s.Messages(ctx, "f", MessageQuery{IncludeRewound: true}); err != nil || len(got) != 3 || got[0].State != "compacted" {
		t.Fatalf("after the second write: %v, %d rows, first %+v; want 3 rows, the first compacted", err, len(got), got[0])
	}

	// A key JSON cannot carry exactly (a NUL byte) is looked up alone: it
	// is stored and found again, or refused, typed, by an engine whose text
	// cannot hold it, with nothing of its batch written.
	odd := ForeignBatch{Origin: "test", First: true, New: true, Last: true, Fingerprint: "g1",
		Session:  ForeignSession{Row: ForeignSessionRow{ID: "g", Source: "test", StartedAt: 1_700_000_000_000}},
		Messages: []ForeignMessage{msg("k\x00nul", "p\x00nul", "active", "odd"), msg("k\x00nul", "", "compacted", "odd again")}}
	res, err = s.WriteForeignBatch(ctx, odd)
	switch {
	case errors.Is(err, ErrInvalidInput):
		if st, _ := s.ForeignSessionState(ctx, "g"); st.Exists {
			t.Error("a refused batch left its session")
		}
	case err != nil:
		t.Fatalf("a key with a NUL byte: %v, want it stored or ErrInvalidInput", err)
	default:
		if res.Messages != 1 || res.Restated != 1 {
			t.Errorf("odd values: %d messages, %d restated; want 1 and 1", res.Messages, res.Restated)
		}
		odd.New = false
		if res, err = s.WriteForeignBatch(ctx, odd); err != nil || res.Messages != 0 {
			t.Errorf("odd values again: %v, %d messages; want them found", err, res.Messages)
		}
		if got, _ := s.Messages(ctx, "g", MessageQuery{}); len(got) != 1 || !strings.Contains(got[0].PlatformMessageID, "\x00") {
			t.Errorf("odd values stored as %+v", got)
		}
	}
}
