package storetest

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// TestImport_TopsUpWhatTheSourceAppended: copying a store again after its
// sessions gained messages appends exactly the new ones (the copy's
// export equals the source's again, counters equal rows); the sessions
// that did not change are skipped and a third copy writes nothing.
func testImport_TopsUpWhatTheSourceAppended(t *testing.T, open Opener) {
	ctx := t.Context()
	src, dst := open(t, Options{}), open(t, Options{})
	FillRich(t, src)
	MustCreate(t, src, NewSession{ID: "empty"})
	copyOnce := func() ImportResult {
		t.Helper()
		res, err := dst.Import(ctx, bytes.NewReader(exportAll(t, src)), ImportOptions{})
		if err != nil {
			t.Fatal(err, res.Errors)
		}
		return res
	}
	if res := copyOnce(); res.Imported != 4 {
		t.Fatalf("first copy: %+v", res)
	}

	// The source goes on: the tip of the conversation and the empty
	// session gain messages, one of them keyed; a copy of the tip (a
	// compression of root-2) names an origin inside a topped-up session.
	AppendTexts(t, src, "root-2", "s", "t")
	if _, err := src.AppendMessage(ctx, "empty", NewMessage{Role: RoleUser, Content: "first words", IdempotencyKey: "e1"}); err != nil {
		t.Fatal(err)
	}
	res := copyOnce()
	if want := (ImportResult{ToppedUp: 2, Skipped: 2, Messages: 3}); !cmp.Equal(res, want) {
		t.Errorf("second copy: %+v, want %+v", res, want)
	}
	want := exportAll(t, src)
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(exportAll(t, dst)), "\n")); diff != "" {
		t.Errorf("the topped-up copy differs from its source (-source +copy):\n%s", diff)
	}
	for _, id := range []string{"root-2", "empty"} {
		sess, err := dst.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := dst.Messages(ctx, id, MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if sess.MessageCount != int64(len(ms)) {
			t.Errorf("%s: counter %d, %d active rows", id, sess.MessageCount, len(ms))
		}
	}
	// The key came over with its message: re-sending it finds that row.
	again, err := dst.AppendMessage(ctx, "empty", NewMessage{Role: RoleUser, Content: "first words", IdempotencyKey: "e1"})
	if err != nil {
		t.Fatal(err)
	}
	if ms, _ := dst.Messages(ctx, "empty", MessageQuery{}); len(ms) != 1 || ms[0].ID != again {
		t.Errorf("the re-sent keyed message was stored again: %v (id %d)", ms, again)
	}

	// Nothing new: every session is skipped as unchanged and nothing is written.
	res = copyOnce()
	if want := (ImportResult{Skipped: 4}); !cmp.Equal(res, want) {
		t.Errorf("third copy: %+v, want %+v", res, want)
	}
	if got := exportAll(t, dst); !bytes.Equal(got, want) {
		t.Errorf("a copy with nothing new changed the store")
	}
}

// TestImport_DivergedSessionIsSkippedNotMerged: an existing session is
// topped up only when its rows are exactly the file's first ones; a row
// that differs in any part of its identity, a store that has more rows
// than the file, or a session that only shares the id is left as it is
// and reported with the reason.
func testImport_DivergedSessionIsSkippedNotMerged(t *testing.T, open Opener) {
	ctx := t.Context()
	keyed := func(line, key string) string {
		return strings.Replace(line, `"state"`, `"idempotency_key":"`+key+`","state"`, 1)
	}
	base := ExportHeader + SessionLine("s", "", "") + MessageLine("s", 1, "one") + keyed(MessageLine("s", 2, "two"), "k2")
	cases := []struct {
		name, file string
		want       []string // the session's rows afterwards
		toppedUp   bool
	}{
		{"grown", base + MessageLine("s", 3, "three"), []string{"active:one", "active:two", "active:three"}, true},
		{"unchanged", base, []string{"active:one", "active:two"}, false},
		{"content differs", ExportHeader + SessionLine("s", "", "") + MessageLine("s", 1, "one") +
			keyed(MessageLine("s", 2, "TWO"), "k2") + MessageLine("s", 3, "three"), []string{"active:one", "active:two"}, false},
		{"key differs", ExportHeader + SessionLine("s", "", "") + MessageLine("s", 1, "one") +
			keyed(MessageLine("s", 2, "two"), "other") + MessageLine("s", 3, "three"), []string{"active:one", "active:two"}, false},
		{"role differs", ExportHeader + SessionLine("s", "", "") +
			strings.Replace(MessageLine("s", 1, "one"), `"role":"user"`, `"role":"assistant"`, 1) +
			keyed(MessageLine("s", 2, "two"), "k2") + MessageLine("s", 3, "three"), []string{"active:one", "active:two"}, false},
		{"created at another time", ExportHeader + SessionLine("s", "", "") +
			strings.Replace(MessageLine("s", 1, "one"), `"created_at":1`, `"created_at":2`, 1) +
			keyed(MessageLine("s", 2, "two"), "k2") + MessageLine("s", 3, "three"), []string{"active:one", "active:two"}, false},
		{"the store has more", ExportHeader + SessionLine("s", "", "") + MessageLine("s", 1, "one"), []string{"active:one", "active:two"}, false},
		{"another session under the id", ExportHeader + startedLine("s", "", "", 2) + MessageLine("s", 1, "one") +
			keyed(MessageLine("s", 2, "two"), "k2") + MessageLine("s", 3, "three"), []string{"active:one", "active:two"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, Options{})
			if res, err := s.Import(ctx, strings.NewReader(base), ImportOptions{}); err != nil || res.Imported != 1 {
				t.Fatal(res, err)
			}
			before := exportAll(t, s)
			res, err := s.Import(ctx, strings.NewReader(c.file), ImportOptions{})
			if err != nil {
				t.Fatal(err, res.Errors)
			}
			if diff := cmp.Diff(c.want, Contents(t, s, "s")); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			sess, err := s.Session(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			if sess.MessageCount != int64(len(c.want)) {
				t.Errorf("counter %d, %d rows", sess.MessageCount, len(c.want))
			}
			switch {
			case c.toppedUp:
				if res.ToppedUp != 1 || res.Messages != 1 || res.Skipped != 0 {
					t.Errorf("result %+v, want one session topped up with one message", res)
				}
			case c.name == "unchanged":
				if res.Skipped != 1 || res.Messages != 0 || len(res.Skips) != 0 {
					t.Errorf("result %+v, want the session skipped as unchanged", res)
				}
			default:
				if res.Skipped != 1 || res.ToppedUp != 0 || res.Messages != 0 || len(res.Skips) != 1 ||
					res.Skips[0].SessionID != "s" || res.Skips[0].Reason == "" {
					t.Errorf("result %+v, want the session skipped with a reason", res)
				}
				if !bytes.Equal(before, exportAll(t, s)) {
					t.Errorf("a diverged session was changed")
				}
			}
		})
	}
}
