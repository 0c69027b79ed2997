package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func exportAll(t *testing.T, s *Store) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := s.Export(t.Context(), &b, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testImport_LinksParentsWhenPresentAndAcyclic(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "existing")
	file := ExportHeader +
		SessionLine("child-first", "later-parent", "branch") + // parent comes later: linked afterwards
		SessionLine("later-parent", "", "") +
		SessionLine("of-existing", "existing", "delegate") + // an existing parent that is not a closed compression: detached
		SessionLine("orphan", "nowhere", "branch") + // parent absent: detached
		SessionLine("existing", "", "") + // exists: skipped
		MessageLine("existing", 1, "never written")
	res, err := s.Import(ctx, strings.NewReader(file), ImportOptions{})
	if err != nil {
		t.Fatal(err, res.Errors)
	}
	want := ImportResult{Imported: 4, Skipped: 1, Detached: 2, Skips: []ImportSkip{{SessionID: "existing"}}}
	if !cmp.Equal(res, want, cmpopts.IgnoreFields(ImportSkip{}, "Reason")) {
		t.Errorf("result %+v, want %+v", res, want)
	}
	for id, parent := range map[string]string{"child-first": "later-parent", "of-existing": "", "orphan": ""} {
		if sess, _ := s.Session(ctx, id); sess.ParentID != parent {
			t.Errorf("%s: parent %q, want %q", id, sess.ParentID, parent)
		}
	}
	if ms, _ := s.Messages(ctx, "existing", MessageQuery{}); len(ms) != 0 {
		t.Errorf("a skipped session's rows were written: %v", ms)
	}
	// Two sessions naming each other: one link is made, the other would
	// close a cycle and is dropped.
	s2 := open(t, Options{})
	res, err = s2.Import(ctx, strings.NewReader(ExportHeader+SessionLine("a", "b", "branch")+SessionLine("b", "a", "branch")), ImportOptions{})
	if err != nil || res.Imported != 2 || res.Detached != 1 {
		t.Errorf("cycle: %+v %v", res, err)
	}
	// A session naming itself as its parent is the shortest cycle: it is
	// imported detached, the rest of the file with it (issue 34, item 1).
	s3 := open(t, Options{})
	res, err = s3.Import(ctx, strings.NewReader(ExportHeader+SessionLine("self", "self", "branch")+
		MessageLine("self", 1, "kept")+SessionLine("next", "self", "branch")), ImportOptions{})
	if err != nil || res.Imported != 2 || res.Detached != 1 {
		t.Errorf("own parent: %+v %v; want both imported, one detached", res, err)
	}
	if sess, err := s3.Session(ctx, "self"); err != nil || sess.ParentID != "" || sess.Kind != "" {
		t.Errorf("self = %+v, %v; want imported without a parent", sess, err)
	}
	if sess, _ := s3.Session(ctx, "next"); sess.ParentID != "self" {
		t.Errorf("next's parent = %q, want self", sess.ParentID)
	}
	if ms, _ := s3.Messages(ctx, "self", MessageQuery{}); len(ms) != 1 {
		t.Errorf("self's messages = %d, want 1", len(ms))
	}
}

// Two users' sessions may share a title; their export imports whole.
func testImport_TitlesSharedAcrossUsers(t *testing.T, open Opener) {
	ctx := t.Context()
	src := open(t, Options{})
	MustCreate(t, src, NewSession{ID: "alice", UserID: "alice", Title: "New chat"})
	MustCreate(t, src, NewSession{ID: "bob", UserID: "bob", Title: "New chat"})
	data := exportAll(t, src)
	dst := open(t, Options{})
	if _, err := dst.Import(ctx, bytes.NewReader(data), ImportOptions{}); err != nil {
		t.Fatalf("import of two users' New chat: %v", err)
	}
	if got := exportAll(t, dst); !bytes.Equal(got, data) {
		t.Errorf("the round trip differs:\n%s\nwant\n%s", got, data)
	}
	MustCreate(t, src, NewSession{ID: "alice-2", UserID: "alice"})
	dup := bytes.ReplaceAll(exportAll(t, src), []byte(`"id":"alice-2"`), []byte(`"id":"alice-2","title":"New chat"`))
	if bytes.Equal(dup, exportAll(t, src)) {
		t.Fatal("the test did not plant a duplicate title")
	}
	if _, err := open(t, Options{}).Import(ctx, bytes.NewReader(dup), ImportOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("one user's title twice in a file = %v, want ErrInvalidInput", err)
	}
}

// TestExportImport_RoundTripIsByteIdentical: export, import into an empty
// store, export again: the same bytes — and the imported store behaves the
// same (lineage, conversation, counters).
func testExportImport_RoundTripIsByteIdentical(t *testing.T, open Opener) {
	ctx := t.Context()
	a := open(t, Options{})
	FillRich(t, a)
	first := exportAll(t, a)

	b := open(t, Options{})
	res, err := b.Import(ctx, bytes.NewReader(first), ImportOptions{})
	if err != nil {
		t.Fatalf("import: %v (%+v)", err, res.Errors)
	}
	if res.Imported != 3 || res.Skipped != 0 || res.Detached != 0 {
		t.Errorf("result %+v", res)
	}
	second := exportAll(t, b)
	if diff := cmp.Diff(strings.Split(string(first), "\n"), strings.Split(string(second), "\n")); diff != "" {
		t.Fatalf("round trip differs (-first +second):\n%s", diff)
	}
	for _, id := range []string{"root", "root-2"} {
		want, _ := a.Conversation(ctx, id, ConversationOptions{Lineage: true})
		got, _ := b.Conversation(ctx, id, ConversationOptions{Lineage: true})
		text := func(ms []Message) (out []string) {
			for _, m := range ms {
				out = append(out, fmt.Sprintf("%s/%s/%s/%v", m.SessionID, m.State, m.Content, m.OriginID != 0))
			}
			return out
		}
		if diff := cmp.Diff(text(want), text(got)); diff != "" {
			t.Errorf("lineage view of %s differs:\n%s", id, diff)
		}
		sa, _ := a.Session(ctx, id)
		sb, _ := b.Session(ctx, id)
		if sa.MessageCount != sb.MessageCount || sa.ToolCallCount != sb.ToolCallCount || sa.Title != sb.Title {
			t.Errorf("%s: counters or title differ: %+v vs %+v", id, sa, sb)
		}
	}
	// Importing the same file again skips every session and changes nothing.
	res, err = b.Import(ctx, bytes.NewReader(first), ImportOptions{})
	if err != nil || res.Skipped != 3 || res.Imported != 0 {
		t.Errorf("second import: %+v %v", res, err)
	}
	if third := exportAll(t, b); !bytes.Equal(first, third) {
		t.Errorf("a skipped import changed the store")
	}
}

func testExport_OneSessionAndItsLineage(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	FillRich(t, s)
	count := func(o ExportOptions) ExportResult {
		var b bytes.Buffer
		res, err := s.Export(ctx, &b, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := int64(strings.Count(b.String(), `"type":"session"`)); got != res.Sessions {
			t.Errorf("%+v: %d session lines, result says %d", o, got, res.Sessions)
		}
		return res
	}
	if r := count(ExportOptions{SessionID: "root-2"}); r.Sessions != 1 {
		t.Errorf("one session: %+v", r)
	}
	if r := count(ExportOptions{SessionID: "root-2", Lineage: true}); r.Sessions != 2 {
		t.Errorf("lineage: %+v", r)
	}
	if _, err := s.Export(ctx, &bytes.Buffer{}, ExportOptions{SessionID: "ghost"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := s.Export(ctx, &bytes.Buffer{}, ExportOptions{Lineage: true}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("lineage without a session: %v", err)
	}
}

// TestImport_FromAFileAndAStream: a regular file is read in place (from
// its current position); a stream is spooled. Both import the same.
func testImport_FromAFileAndAStream(t *testing.T, open Opener) {
	ctx := t.Context()
	src := open(t, Options{})
	FillRich(t, src)
	data := exportAll(t, src)
	path := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(path, append([]byte("skip me\n"), data...), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Seek(int64(len("skip me\n")), 0)
	viaFile := open(t, Options{})
	var lastDone, total int64
	if _, err := viaFile.Import(ctx, f, ImportOptions{OnProgress: func(d, n int64) { lastDone, total = d, n }}); err != nil {
		t.Fatal(err)
	}
	if lastDone != total || total != int64(len(data)) {
		t.Errorf("progress ended at %d of %d, want %d of %d", lastDone, total, len(data), len(data))
	}
	viaStream := open(t, Options{})
	if _, err := viaStream.Import(ctx, struct{ *bytes.Reader }{bytes.NewReader(data)}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"file": viaFile, "stream": viaStream} {
		if got := exportAll(t, s); !bytes.Equal(got, data) {
			t.Errorf("import from a %s differs from the source", name)
		}
	}
}

// TestImport_BadInput: every malformed file is refused whole with
// ErrInvalidInput, the problem's line named, and nothing written.
func testImport_BadInput(t *testing.T, open Opener) {
	ctx := t.Context()
	good := SessionLine("ok", "", "")
	cases := []struct {
		name string
		file string
		opts ImportOptions
		line int
		want string
	}{
		{"empty file", "", ImportOptions{}, 1, "empty file"},
		{"no header", good, ImportOptions{}, 1, "not a sessiondb-export header"},
		{"future version", `{"type":"header","format":"sessiondb-export","version":9}` + "\n", ImportOptions{}, 1, "version 9"},
		{"not json", ExportHeader + good + "{oops\n", ImportOptions{}, 3, "not a JSON object"},
		{"invalid utf-8", ExportHeader + good + "{\"type\":\"\xff\"}\n", ImportOptions{}, 3, "UTF-8"},
		{"unknown type", ExportHeader + `{"type":"gizmo"}` + "\n", ImportOptions{}, 2, "unknown record type"},
		{"unknown field", ExportHeader + strings.Replace(good, `"source":"t"`, `"source":"t","colour":"red"`, 1), ImportOptions{}, 2, "unknown field"},
		{"second header", ExportHeader + ExportHeader, ImportOptions{}, 2, "second header"},
		{"message first", ExportHeader + MessageLine("ok", 1, "x"), ImportOptions{}, 2, "before any session"},
		{"message of another session", ExportHeader + good + MessageLine("other", 1, "x"), ImportOptions{}, 3, "inside session"},
		{"seq gap", ExportHeader + good + MessageLine("ok", 2, "x"), ImportOptions{}, 3, "seq 2, want 1"},
		{"bad role", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"user"`, `"robot"`, 1), ImportOptions{}, 3, "role"},
		{"bad state", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"active"`, `"lost"`, 1), ImportOptions{}, 3, "state"},
		{"duplicate session", ExportHeader + good + good, ImportOptions{}, 3, "appears twice"},
		{"empty id", ExportHeader + SessionLine("", "", ""), ImportOptions{}, 2, "empty session id"},
		// issue 34, item 2: a model config is a JSON object or nothing.
		{"model config not JSON", ExportHeader + strings.Replace(good, `"source":"t"`, `"source":"t","model_config":"{not-json"`, 1), ImportOptions{}, 2, "model config"},
		{"model config not an object", ExportHeader + strings.Replace(good, `"source":"t"`, `"source":"t","model_config":"[1]"`, 1), ImportOptions{}, 2, "model config"},
		{"bad kind", ExportHeader + SessionLine("x", "y", "cousin"), ImportOptions{}, 2, "kind"},
		{"negative tokens", ExportHeader + strings.Replace(good, `"input_tokens":0`, `"input_tokens":-5`, 1), ImportOptions{}, 2, "negative"},
		{"title too long", ExportHeader + strings.Replace(good, `"source":"t"`, `"source":"t","title":"`+strings.Repeat("x", 101)+`"`, 1), ImportOptions{}, 2, "title"},
		{"bad tool calls", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"state"`, `"tool_calls":{"id":1},"state"`, 1), ImportOptions{}, 3, "tool calls"},
		{"origin ahead", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"created_at":1`, `"created_at":1,"origin":{"session_id":"ok","seq":5}`, 1), ImportOptions{}, 3, "origin"},
		{"duplicate title", ExportHeader + strings.Replace(good, `"source":"t"`, `"source":"t","title":"Same"`, 1) + strings.Replace(SessionLine("ok2", "", ""), `"source":"t"`, `"source":"t","title":"Same"`, 1), ImportOptions{}, 3, "same title"},
		{"duplicate key", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"state"`, `"idempotency_key":"k","state"`, 1) + strings.Replace(MessageLine("ok", 2, "y"), `"state"`, `"idempotency_key":"k","state"`, 1), ImportOptions{}, 4, "appears twice"},
		{"unknown part field", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"state"`, `"parts":[{"type":"text","txt":"x"}],"state"`, 1), ImportOptions{}, 3, "parts"},
		{"bad part", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"state"`, `"parts":[{"type":"image","url":"https://x"}],"state"`, 1), ImportOptions{}, 3, "media type"},
		{"metadata not an object", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"state"`, `"metadata":"[1]","state"`, 1), ImportOptions{}, 3, "metadata"},
		{"reasoning details not JSON", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"state"`, `"reasoning_details":"{","state"`, 1), ImportOptions{}, 3, "reasoning details"},
		{"duplicate platform id", ExportHeader + good + strings.Replace(MessageLine("ok", 1, "x"), `"state"`, `"platform_message_id":"p","state"`, 1) + strings.Replace(MessageLine("ok", 2, "y"), `"state"`, `"platform_message_id":"p","state"`, 1), ImportOptions{}, 4, "appears twice"},
		{"line over the cap", ExportHeader + good + MessageLine("ok", 1, strings.Repeat("x", 2000)), ImportOptions{MaxRecordBytes: 1000}, 3, "longer than 1000 bytes"},
		{"too many messages", ExportHeader + good + MessageLine("ok", 1, "a") + MessageLine("ok", 2, "b"), ImportOptions{MaxMessagesPerSession: 1}, 4, "more than 1 messages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, Options{})
			res, err := s.Import(ctx, strings.NewReader(c.file), c.opts)
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("err = %v, want ErrInvalidInput", err)
			}
			if len(res.Errors) == 0 || res.Errors[0].Line != c.line || !strings.Contains(res.Errors[0].Error(), c.want) {
				t.Errorf("errors %v, want first on line %d containing %q", res.Errors, c.line, c.want)
			}
			if in := rowCounts(t, s); in.Sessions != 0 || in.Messages != 0 {
				t.Errorf("a refused import wrote %d sessions, %d messages", in.Sessions, in.Messages)
			}
		})
	}
}

// a title that already exists in the target store passes validation
// and fails mid-write: earlier sessions stay imported (partial import), and
// the error is not ErrInvalidInput.
func testImport_TitleTakenInTheStoreIsDropped(t *testing.T, open Opener) {
	ctx := t.Context()
	a := open(t, Options{})
	MustCreate(t, a, NewSession{ID: "s1", Source: "x"})
	AppendTexts(t, a, "s1", "hello")
	time.Sleep(5 * time.Millisecond)
	MustCreate(t, a, NewSession{ID: "s2", Source: "x", Title: "Project"})
	time.Sleep(5 * time.Millisecond)
	MustCreate(t, a, NewSession{ID: "s3", Source: "x"})
	file := exportAll(t, a)

	b := open(t, Options{})
	MustCreate(t, b, NewSession{ID: "other", Source: "x", Title: "Project"})
	res, err := b.Import(ctx, bytes.NewReader(file), ImportOptions{})
	if err != nil || res.Imported != 3 || res.Untitled != 1 {
		t.Fatalf("import: %+v %v; want all 3 imported, 1 without its title", res, err)
	}
	if s2, _ := b.Session(ctx, "s2"); s2.Title != "" {
		t.Errorf("s2 took a title the store already had: %q", s2.Title)
	}
}

// the write pass re-reads a regular file in place: a file changed after
// validation is written unvalidated (here truncated: s2 silently loses rows).
func testImport_WritesWhatItChecked(t *testing.T, open Opener) {
	ctx := t.Context()
	a := open(t, Options{})
	newTestSession(t, a, "s1")
	AppendTexts(t, a, "s1", "x")
	time.Sleep(5 * time.Millisecond)
	newTestSession(t, a, "s2")
	AppendTexts(t, a, "s2", "a", "b", "c")
	data := exportAll(t, a)
	path := t.TempDir() + "/f.jsonl"
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	cut := bytes.LastIndex(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) + 1
	b := open(t, Options{})
	once := false
	res, err := b.Import(ctx, f, ImportOptions{OnProgress: func(done, total int64) {
		if !once {
			once = true
			os.Truncate(path, int64(cut)) // another writer rewrites the file
		}
	}})
	got, _ := b.Messages(ctx, "s2", MessageQuery{})
	t.Logf("import %+v %v; s2 has %d of 3 messages", res, err, len(got))
	if err == nil && len(got) != 3 {
		t.Errorf("import succeeded with s2 truncated to %d messages", len(got))
	}
}

// exporting one compression child (SessionID without Lineage) names
// origins in a session outside the file; Import refuses the store's own
// export.
func testExportImport_OneContinuationAlone(t *testing.T, open Opener) {
	ctx := t.Context()
	a := open(t, Options{})
	newTestSession(t, a, "p")
	AppendTexts(t, a, "p", "one")
	h := LockFor(t, a, "p")
	w, _ := a.ActiveWatermark(ctx, "p")
	AppendTexts(t, a, "p", "late")
	if _, err := a.PublishCompressionChild(ctx, "p", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := a.Export(ctx, &buf, ExportOptions{SessionID: "c"}); err != nil {
		t.Fatal(err)
	}
	b := open(t, Options{})
	res, err := b.Import(ctx, bytes.NewReader(buf.Bytes()), ImportOptions{})
	if err != nil {
		t.Errorf("importing Export(SessionID: child): %v %v", err, res.Errors)
	}
}

// a continuation whose started_at sorts before its parent (same
// millisecond with a smaller id, or clock skew) is exported first; the
// full export is then refused by Import.
func testExportImport_ChildExportedBeforeItsParent(t *testing.T, e Engine) {
	ctx := t.Context()
	a := e.Open(t, Options{})
	newTestSession(t, a, "zparent")
	AppendTexts(t, a, "zparent", "one")
	h := LockFor(t, a, "zparent")
	w, _ := a.ActiveWatermark(ctx, "zparent")
	AppendTexts(t, a, "zparent", "late")
	if _, err := a.PublishCompressionChild(ctx, "zparent", Continuation{Holder: h, Watermark: w, Child: NewSession{ID: "achild"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "sum", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	// Same millisecond as the parent (what a fast publish gives).
	e.Exec(t, a, "UPDATE sessions SET started_at = (SELECT started_at FROM sessions WHERE id='zparent') WHERE id='achild'")
	file := exportAll(t, a)
	b := e.Open(t, Options{})
	res, err := b.Import(ctx, bytes.NewReader(file), ImportOptions{})
	if err != nil {
		t.Fatalf("importing a full export: %v %v", err, res.Errors)
	}
	if again := exportAll(t, b); !bytes.Equal(file, again) {
		t.Errorf("round trip differs when a child is exported before its parent:\n%s\n---\n%s", file, again)
	}
}

// testExportImport_LargeSessionRoundTrip: a session of thousands of
// messages (more than an engine writes in one batch, several times over)
// and the rich fixture's copies and origins come back byte for byte, in
// order, with the counters right.
func testExportImport_LargeSessionRoundTrip(t *testing.T, open Opener) {
	ctx := t.Context()
	a := open(t, Options{})
	FillRich(t, a)
	if _, err := a.CreateSession(ctx, NewSession{ID: "long", Source: "t"}); err != nil {
		t.Fatal(err)
	}
	const n = 2500
	batch := make([]NewMessage, 0, 500)
	for i := range n {
		m := NewMessage{Role: RoleUser, Content: fmt.Sprintf("turn %d of the long session", i)}
		if i%7 == 3 {
			m = NewMessage{Role: RoleAssistant, Content: "calling", ToolCalls: []ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "lookup", Arguments: `{"q":"x"}`}}}
		}
		if i%11 == 5 {
			m.IdempotencyKey = fmt.Sprintf("k%d", i)
		}
		batch = append(batch, m)
		if len(batch) == cap(batch) {
			if _, err := a.AppendMessages(ctx, "long", batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	first := exportAll(t, a)

	b := open(t, Options{})
	res, err := b.Import(ctx, bytes.NewReader(first), ImportOptions{})
	if err != nil {
		t.Fatalf("import: %v (%+v)", err, res.Errors)
	}
	if second := exportAll(t, b); !bytes.Equal(first, second) {
		t.Fatalf("round trip differs (-first +second):\n%s", cmp.Diff(strings.Split(string(first), "\n"), strings.Split(string(second), "\n")))
	}
	got, err := b.Session(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	if got.MessageCount != n || got.ToolCallCount != (n+3)/7 {
		t.Errorf("counters after import: %d messages, %d tool calls; want %d, %d", got.MessageCount, got.ToolCallCount, n, (n+3)/7)
	}
}
