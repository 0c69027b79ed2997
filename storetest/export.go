package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

func exportAll(t *testing.T, s *Store) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := s.Export(t.Context(), &b, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const header = `{"type":"header","format":"sessiondb-export","version":1}` + "\n"

func sessionLine(id, parent, kind string) string {
	p := ""
	if parent != "" {
		p = fmt.Sprintf(`,"parent_session_id":%q,"kind":%q`, parent, kind)
	}
	return fmt.Sprintf(`{"type":"session","id":%q,"source":"t"%s,"started_at":1,"title_rank":0,"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"api_call_count":0,"estimated_cost_usd":0,"actual_cost_usd":0,"archived":false,"pinned":false,"hidden":false,"rewind_count":0}`+"\n", id, p)
}

func messageLine(sid string, seq int, content string) string {
	return fmt.Sprintf(`{"type":"message","session_id":%q,"seq":%d,"role":"user","content":%q,"state":"active","created_at":1}`+"\n", sid, seq, content)
}

func testImport_LinksParentsWhenPresentAndAcyclic(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "existing")
	file := header +
		sessionLine("child-first", "later-parent", "branch") + // parent comes later: linked afterwards
		sessionLine("later-parent", "", "") +
		sessionLine("of-existing", "existing", "delegate") + // an existing parent that is not a closed compression: detached
		sessionLine("orphan", "nowhere", "branch") + // parent absent: detached
		sessionLine("existing", "", "") + // exists: skipped
		messageLine("existing", 1, "never written")
	res, err := s.Import(ctx, strings.NewReader(file), ImportOptions{})
	if err != nil {
		t.Fatal(err, res.Errors)
	}
	if want := (ImportResult{Imported: 4, Skipped: 1, Detached: 2}); !cmp.Equal(res, want) {
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
	res, err = s2.Import(ctx, strings.NewReader(header+sessionLine("a", "b", "branch")+sessionLine("b", "a", "branch")), ImportOptions{})
	if err != nil || res.Imported != 2 || res.Detached != 1 {
		t.Errorf("cycle: %+v %v", res, err)
	}
}

// Two users' sessions may share a title; their export imports whole.
func testImport_TitlesSharedAcrossUsers(t *testing.T, open Opener) {
	ctx := t.Context()
	src := open(t, Options{})
	mustCreate(t, src, NewSession{ID: "alice", UserID: "alice", Title: "New chat"})
	mustCreate(t, src, NewSession{ID: "bob", UserID: "bob", Title: "New chat"})
	data := exportAll(t, src)
	dst := open(t, Options{})
	if _, err := dst.Import(ctx, bytes.NewReader(data), ImportOptions{}); err != nil {
		t.Fatalf("import of two users' New chat: %v", err)
	}
	if got := exportAll(t, dst); !bytes.Equal(got, data) {
		t.Errorf("the round trip differs:\n%s\nwant\n%s", got, data)
	}
	mustCreate(t, src, NewSession{ID: "alice-2", UserID: "alice"})
	dup := bytes.ReplaceAll(exportAll(t, src), []byte(`"id":"alice-2"`), []byte(`"id":"alice-2","title":"New chat"`))
	if bytes.Equal(dup, exportAll(t, src)) {
		t.Fatal("the test did not plant a duplicate title")
	}
	if _, err := open(t, Options{}).Import(ctx, bytes.NewReader(dup), ImportOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("one user's title twice in a file = %v, want ErrInvalidInput", err)
	}
}
