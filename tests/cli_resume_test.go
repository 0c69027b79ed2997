package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// A person names a session by an id prefix or a title, and resumes a
// conversation that compression continued.
func TestCLI_ResolveAndResume(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	for _, n := range []db.NewSession{{ID: "20261101-a1", Title: "Fix the build"}, {ID: "20261101-b1"}} {
		if _, err := s.CreateSession(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AppendMessage(ctx, "20261101-a1", db.NewMessage{Role: db.RoleUser, Content: "why does it fail?"}); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if _, err := s.AppendMessage(ctx, "20261101-b1", db.NewMessage{Role: db.RoleUser, Content: fmt.Sprintf("b turn %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	holder := db.NewHolder("test")
	if _, ok, err := s.AcquireCompressionLock(ctx, "20261101-a1", holder, 0); err != nil || !ok {
		t.Fatalf("compression lock: %v, %v", ok, err)
	}
	w, err := s.ActiveWatermark(ctx, "20261101-a1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishCompressionChild(ctx, "20261101-a1", db.Continuation{Holder: holder, Watermark: w,
		Child:    db.NewSession{ID: "20261101-a2"},
		Messages: []db.NewMessage{{Role: db.RoleAssistant, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	env := []string{"SESSIONDB_PATH=" + path}
	steps := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"UniquePrefix", []string{"session", "show", "20261101-b"}, 0, "20261101-b1\nsource", ""},
		{"AmbiguousPrefix", []string{"session", "show", "20261101"}, 2, "", "20261101-a1, 20261101-a2, 20261101-b1"},
		{"UnknownPrefix", []string{"session", "show", "2025"}, 3, "", "no session id starts with"},
		{"Title", []string{"session", "show", "--title", "Fix the build"}, 0, "20261101-a2", ""},
		{"NumberedTitle", []string{"--json", "session", "show", "--title", "Fix the build #2"}, 0, `"id": "20261101-a2"`, ""},
		{"TitleAndID", []string{"session", "show", "20261101-b1", "--title", "x"}, 2, "", "not both"},
		{"UnknownTitle", []string{"session", "show", "--title", "Nope"}, 3, "", "no session titled"},
		{"ResumeFromRoot", []string{"resume", "20261101-a1"}, 0, "continue in: 20261101-a2\nlast turns:  20261101-a1", ""},
		{"ResumeByTitle", []string{"--json", "resume", "--title", "Fix the build"}, 0, `"turns": {`, ""},
		{"ResumePlain", []string{"resume", "20261101-b"}, 0, "continue in: 20261101-b1\n", ""},
		// Every command that reads one session takes a prefix.
		{"MessagesByPrefix", []string{"messages", "20261101-b", "--limit", "2"}, 0, "b turn 0\n#", "next page with --after"},
		{"MessagesAmbiguous", []string{"messages", "20261101"}, 2, "", "names more than one session"},
		{"ConversationByPrefix", []string{"conversation", "20261101-b"}, 0, "b turn 6\n", ""},
		{"ConversationUnknown", []string{"conversation", "2025"}, 3, "", "no session id starts with"},
		// session show ends with the last turns and how to see them all.
		{"ShowsLastMessages", []string{"session", "show", "20261101-b"}, 0,
			"the last 5 of 7 messages (all of them: sessiondb messages 20261101-b1):\n#", ""},
		{"ShowsAllOfAShortOne", []string{"session", "show", "20261101-a1"}, 0, "1 message:\n#", ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := cli(t, env, "", st.args...)
			if r.code != st.code || !strings.Contains(r.stdout, st.stdout) || !strings.Contains(r.stderr, st.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %q (want %q)\nstderr: %q (want %q)", r.code, st.code, r.stdout, st.stdout, r.stderr, st.stderr)
			}
		})
	}
}
