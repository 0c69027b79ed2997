package storetest

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/sessiondb/sessiondb/store"
)

// testSessionsByIDSubstring: sessions are found by any part of their id,
// the text taken literally, newest start first (issue 34, "Search").
func testSessionsByIDSubstring(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	for i, id := range []string{"tg-778899-1", "cli-7788-x", "cli_100%_done", "other"} {
		newTestSession(t, s, id)
		e.Exec(t, s, "UPDATE sessions SET started_at = $1 WHERE id = $2", time.Now().Add(time.Duration(i)*time.Minute).UnixMilli(), id)
	}
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"7788", []string{"cli-7788-x", "tg-778899-1"}},
		{"%", []string{"cli_100%_done"}},
		{"_", []string{"cli_100%_done"}},
		{"-1", []string{"tg-778899-1"}},
		{"nothing", nil},
	} {
		got, err := s.SessionsByIDSubstring(ctx, tt.text, 0)
		if err != nil {
			t.Fatalf("SessionsByIDSubstring(%q): %v", tt.text, err)
		}
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); diff != "" {
			t.Errorf("SessionsByIDSubstring(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
	if got, _ := s.SessionsByIDSubstring(ctx, "cli", 1); !slices.Equal(got, []string{"cli_100%_done"}) {
		t.Errorf("limit 1 = %v, want the newest", got)
	}
	for _, bad := range []string{"", "a\xffb"} {
		if _, err := s.SessionsByIDSubstring(ctx, bad, 0); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("SessionsByIDSubstring(%q) = %v, want ErrInvalidInput", bad, err)
		}
	}
}

// testUserCwds: a user's sessions' distinct working directories, the most
// recently started first (issue 34, "Usage and metadata").
func testUserCwds(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	for i, n := range []NewSession{
		{ID: "a1", UserID: "ana", Cwd: "/src/app"},
		{ID: "a2", UserID: "ana", Cwd: "/src/web"},
		{ID: "a3", UserID: "ana", Cwd: "/src/app"},
		{ID: "a4", UserID: "ana"},
		{ID: "b1", UserID: "bo", Cwd: "/home/bo"},
		{ID: "n1", Cwd: "/tmp"},
	} {
		n.Source = "cli"
		MustCreate(t, s, n)
		e.Exec(t, s, "UPDATE sessions SET started_at = $1 WHERE id = $2", time.Now().Add(time.Duration(i)*time.Minute).UnixMilli(), n.ID)
	}
	for user, want := range map[string][]string{"ana": {"/src/app", "/src/web"}, "bo": {"/home/bo"}, "": {"/tmp"}, "nobody": {}} {
		got, err := s.UserCwds(ctx, user, 0)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("UserCwds(%q) = %v, %v; want %v", user, got, err, want)
		}
	}
}

// testExportBySource: an export of one source holds that source's
// sessions only (issue 34, "Export by source").
func testExportBySource(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	for _, n := range []NewSession{{ID: "c1", Source: "cli"}, {ID: "g1", Source: "gateway"}, {ID: "c2", Source: "cli"}} {
		MustCreate(t, s, n)
		AppendTexts(t, s, n.ID, "hello from "+n.ID)
	}
	var b bytes.Buffer
	res, err := s.Export(ctx, &b, ExportOptions{Source: "cli"})
	if err != nil || res.Sessions != 2 || res.Messages != 2 {
		t.Fatalf("export of cli = %+v, %v; want 2 sessions, 2 messages", res, err)
	}
	if strings.Contains(b.String(), `"g1"`) || !strings.Contains(b.String(), `"c1"`) || !strings.Contains(b.String(), `"c2"`) {
		t.Errorf("export of cli:\n%s", b.String())
	}
	other := e.Open(t, Options{})
	if r, err := other.Import(ctx, &b, ImportOptions{}); err != nil || r.Imported != 2 {
		t.Errorf("import of the cli export = %+v, %v", r, err)
	}
	if _, err := s.Export(ctx, &b, ExportOptions{Source: "cli", SessionID: "c1"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Source with SessionID = %v, want ErrInvalidInput", err)
	}
}

// testMessagesAround: a window before and after a message, with the
// session's first and last messages as bookends when the window does not
// reach them; rewound rows are not in it (issue 34, "messages around").
func testMessagesAround(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	newTestSession(t, s, "w")
	ids := AppendTexts(t, s, "w", "m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9")
	texts := func(ms []Message) (out []string) {
		for _, m := range ms {
			out = append(out, m.Content)
		}
		return out
	}
	content := func(m *Message) string {
		if m == nil {
			return ""
		}
		return m.Content
	}
	for _, tt := range []struct {
		at, before, after int
		wantBefore        []string
		wantAfter         []string
		first, last       string
	}{
		{5, 2, 2, []string{"m3", "m4"}, []string{"m6", "m7"}, "m0", "m9"},
		{1, 3, 1, []string{"m0"}, []string{"m2"}, "", "m9"},
		{8, 1, 5, []string{"m7"}, []string{"m9"}, "m0", ""},
		{0, 0, 0, nil, nil, "", "m9"},
	} {
		w, err := s.MessagesAround(ctx, "w", ids[tt.at], tt.before, tt.after)
		if err != nil {
			t.Fatalf("MessagesAround(m%d): %v", tt.at, err)
		}
		got := []any{texts(w.Before), w.Anchor.Content, texts(w.After), content(w.First), content(w.Last)}
		want := []any{tt.wantBefore, "m" + string(rune('0'+tt.at)), tt.wantAfter, tt.first, tt.last}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("MessagesAround(m%d, %d, %d) (-want +got):\n%s", tt.at, tt.before, tt.after, diff)
		}
	}
	// Rewound rows drop out of the window and the bookends.
	if _, err := s.RewindTo(ctx, "w", ids[8], RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := s.MessagesAround(ctx, "w", ids[5], 1, 1)
	if err != nil || content(w.Last) != "m7" || !slices.Equal(texts(w.After), []string{"m6"}) {
		t.Errorf("after a rewind to m8: after %v, last %q, %v; want m6 and m7", texts(w.After), content(w.Last), err)
	}
	newTestSession(t, s, "other")
	for _, c := range []struct {
		sid    string
		id     int64
		b, a   int
		want   error
		reason string
	}{
		{"other", ids[1], 1, 1, ErrNotFound, "another session's message"},
		{"w", 1 << 40, 1, 1, ErrNotFound, "no such message"},
		{"ghost", ids[1], 1, 1, ErrNotFound, "no such session"},
		{"w", ids[1], -1, 1, ErrInvalidInput, "a negative window"},
		{"w", ids[1], 1, 1001, ErrInvalidInput, "a window over 1000"},
	} {
		if _, err := s.MessagesAround(ctx, c.sid, c.id, c.b, c.a); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.reason, err, c.want)
		}
	}
}
