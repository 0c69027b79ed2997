package db

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/storetest"
)

// FuzzImport: no input makes Import panic or write part of a bad file. A
// file is either refused whole (ErrInvalidInput, its problems listed,
// nothing written) or imported, and the store grows by exactly what the
// result reports. (The byte-identical round trip is
// TestExportImport_RoundTripIsByteIdentical.)
func FuzzImport(f *testing.F) {
	src := openTestStore(f, Options{})
	storetest.FillRich(f, src.Store)
	var b bytes.Buffer
	if _, err := src.Export(f.Context(), &b, ExportOptions{}); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(storetest.ExportHeader + storetest.SessionLine("a", "", "") + storetest.MessageLine("a", 1, "hi")))
	f.Add([]byte(storetest.ExportHeader + storetest.SessionLine("a", "b", "branch") + storetest.SessionLine("b", "a", "branch")))
	f.Add([]byte(storetest.ExportHeader + `{"type":"message"}` + "\n"))
	f.Add([]byte("\xff\xfe"))
	f.Add([]byte{})

	s := openTestStore(f, Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := t.Context()
		before, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Import(ctx, bytes.NewReader(data), ImportOptions{MaxRecordBytes: 1 << 20})
		after, _ := s.Info(ctx)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) || len(res.Errors) == 0 {
				t.Fatalf("import failed with %v (%d problems listed); want ErrInvalidInput with problems", err, len(res.Errors))
			}
			if after.Sessions != before.Sessions || after.Messages != before.Messages {
				t.Fatalf("a refused import wrote: %d→%d sessions, %d→%d messages", before.Sessions, after.Sessions, before.Messages, after.Messages)
			}
			return
		}
		if after.Sessions-before.Sessions != int64(res.Imported) || after.Messages-before.Messages != res.Messages {
			t.Fatalf("import says %+v; the store grew by %d sessions, %d messages", res,
				after.Sessions-before.Sessions, after.Messages-before.Messages)
		}
	})
}

// FuzzContentRoundTrip: any valid UTF-8 content (NUL bytes included) comes
// back byte-exact, through the store and through export and import;
// invalid UTF-8 is refused with ErrInvalidInput and writes nothing.
// fuzzSessions numbers the fuzz target's sessions.
var fuzzSessions atomic.Int64

func FuzzContentRoundTrip(f *testing.F) {
	for _, seed := range []string{"", "hello", "nul\x00byte", "京都 🔥", strings.Repeat("x", 5000), "\xff", "a\u2028b", `"quoted" \back\slash`} {
		f.Add(seed)
	}
	s := openTestStore(f, Options{})
	other := openTestStore(f, Options{})
	f.Fuzz(func(t *testing.T, content string) {
		ctx := t.Context()
		sid := newTestSession(t, s, fmt.Sprintf("fuzz-%d", fuzzSessions.Add(1))).ID
		id, err := s.AppendMessage(ctx, sid, NewMessage{Role: RoleUser, Content: content})
		if !utf8.ValidString(content) {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("invalid UTF-8 %q: %v, want ErrInvalidInput", content, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		ms, err := s.Messages(ctx, sid, MessageQuery{AfterID: id - 1, Limit: 1})
		if err != nil || len(ms) != 1 || ms[0].Content != content {
			t.Fatalf("read back %+v, want %q (%v)", ms, content, err)
		}
		var b bytes.Buffer
		if _, err := s.Export(ctx, &b, ExportOptions{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Import(ctx, &b, ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		got, _ := other.Messages(ctx, sid, MessageQuery{Limit: 1})
		if len(got) != 1 || got[0].Content != content {
			t.Fatalf("after export and import: %+v, want %q", got, content)
		}
	})
}
