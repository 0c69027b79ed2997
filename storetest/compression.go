package storetest

import (
	"errors"
	"fmt"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// appendTexts appends user messages with the given contents and returns
// their ids.
func appendTexts(t testing.TB, s *Store, sessionID string, texts ...string) []int64 {
	t.Helper()
	ms := make([]NewMessage, len(texts))
	for i, c := range texts {
		ms[i] = NewMessage{Role: RoleUser, Content: c}
	}
	ids, err := s.AppendMessages(t.Context(), sessionID, ms)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	return ids
}

// contents lists a session's messages as "state:content" in id order.
func contents(t *testing.T, s *Store, sessionID string) []string {
	t.Helper()
	ms, err := s.Messages(t.Context(), sessionID, MessageQuery{IncludeRewound: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s:%s", m.State, m.Content))
	}
	return out
}

func testCompactSession_VerifiesTheLock(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "c")
	appendTexts(t, s, "c", "one")
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
	if diff := cmp.Diff([]string{"active:one"}, contents(t, s, "c")); diff != "" {
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
