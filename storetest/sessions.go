package storetest

import (
	"errors"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignoreTimes = cmpopts.IgnoreFields(Session{}, "StartedAt", "EndedAt", "RootStartedAt", "ConversationActiveAt")

func testCreateSession(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	got, err := s.CreateSession(ctx, NewSession{ID: "s1", Source: "cli", Title: "First", Model: "gpt-5", Cwd: "/src"})
	if err != nil {
		t.Fatal(err)
	}
	want := Session{ID: "s1", Source: "cli", Title: "First", TitleRank: TitleUser, Model: "gpt-5", Cwd: "/src"}
	if diff := cmp.Diff(want, got, ignoreTimes); diff != "" {
		t.Errorf("CreateSession (-want +got):\n%s", diff)
	}
	if got.StartedAt.IsZero() || got.Ended() {
		t.Errorf("StartedAt=%v Ended=%v, want a start time and live", got.StartedAt, got.Ended())
	}
	read, err := s.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, read); diff != "" {
		t.Errorf("Session read back differs (-created +read):\n%s", diff)
	}

	generated, err := s.CreateSession(ctx, NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if generated.ID == "" || generated.Source != "unknown" {
		t.Errorf("defaults: id %q source %q", generated.ID, generated.Source)
	}
}

func testCreateSession_Refusals(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, NewSession{ID: "taken", Title: "Taken title"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   NewSession
		want error
	}{
		{"DuplicateID", NewSession{ID: "taken"}, ErrExists},
		{"DuplicateTitle", NewSession{ID: "other", Title: "Taken title"}, ErrExists},
		{"UnknownParent", NewSession{ID: "child", ParentID: "ghost"}, ErrNotFound},
		{"OwnParent", NewSession{ID: "loop", ParentID: "loop"}, ErrInvalidInput},
		{"ModelConfigNotJSON", NewSession{ID: "cfg", ModelConfig: "{not-json"}, ErrInvalidInput},
		{"ModelConfigNotAnObject", NewSession{ID: "cfg", ModelConfig: `"yolo"`}, ErrInvalidInput},
		{"TitleTooLong", NewSession{ID: "long", Title: strings.Repeat("t", 101)}, ErrInvalidInput},
		{"ControlCharInID", NewSession{ID: "a\nb"}, ErrInvalidInput},
		{"InvalidUTF8ID", NewSession{ID: "a\xffb"}, ErrInvalidInput},
		{"IDTooLong", NewSession{ID: strings.Repeat("i", 257)}, ErrInvalidInput},
		{"InvalidUTF8Prompt", NewSession{ID: "p", SystemPrompt: "\xc3\x28"}, ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.CreateSession(ctx, tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("CreateSession(%+v) = %v, want %v", tt.in, err, tt.want)
			}
			all, err := s.ListSessions(ctx, SessionFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 1 {
				t.Errorf("a refused create left %d sessions, want 1", len(all))
			}
		})
	}
	// A title of exactly 100 characters (not bytes) is fine.
	if _, err := s.CreateSession(ctx, NewSession{ID: "cjk", Title: strings.Repeat("題", 100)}); err != nil {
		t.Errorf("100-character title refused: %v", err)
	}
}

func testEnsureSession(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	first, created, err := s.EnsureSession(ctx, NewSession{ID: "s1", Source: "cli", Model: "a"})
	if err != nil || !created {
		t.Fatalf("first EnsureSession: created=%v err=%v", created, err)
	}
	again, created, err := s.EnsureSession(ctx, NewSession{ID: "s1", Source: "gateway", Model: "b"})
	if err != nil || created {
		t.Fatalf("second EnsureSession: created=%v err=%v", created, err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("EnsureSession overwrote an existing session (-first +again):\n%s", diff)
	}
}

func testEndSession_FirstReasonWins(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	ended, err := s.EndSession(ctx, "s1", "user_exit")
	if err != nil || !ended {
		t.Fatalf("first EndSession: ended=%v err=%v", ended, err)
	}
	ended, err = s.EndSession(ctx, "s1", "compression")
	if err != nil || ended {
		t.Fatalf("second EndSession: ended=%v err=%v, want false, nil", ended, err)
	}
	got, _ := s.Session(ctx, "s1")
	if got.EndReason != "user_exit" || !got.Ended() {
		t.Errorf("end reason %q ended=%v, want the first reason", got.EndReason, got.Ended())
	}
	if _, err := s.EndSession(ctx, "ghost", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("EndSession(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.EndSession(ctx, "s1", ""); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("EndSession(empty reason) = %v, want ErrInvalidInput", err)
	}
}

func testSession_NotFound(t *testing.T, open Opener) {
	s := open(t, Options{})
	if _, err := s.Session(t.Context(), "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Session(unknown) = %v, want ErrNotFound", err)
	}
}

func testListSessions(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	for _, n := range []NewSession{
		{ID: "a", Source: "cli"},
		{ID: "b", Source: "gateway"},
		{ID: "c", Source: "cli", ParentID: "a"},
		{ID: "d", Source: "cli"},
	} {
		if _, err := s.CreateSession(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.EndSession(ctx, "d", "done"); err != nil {
		t.Fatal(err)
	}
	ids := func(f SessionFilter) []string {
		t.Helper()
		ss, err := s.ListSessions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range ss {
			out = append(out, x.ID)
		}
		return out
	}
	// Newest first; sessions created in the same millisecond fall back to
	// id order, which the ids above follow too.
	tests := []struct {
		name string
		f    SessionFilter
		want []string
	}{
		{"All", SessionFilter{}, []string{"d", "c", "b", "a"}},
		{"BySource", SessionFilter{Source: "cli"}, []string{"d", "c", "a"}},
		{"ByParent", SessionFilter{ParentID: "a"}, []string{"c"}},
		{"LiveOnly", SessionFilter{Ended: new(false)}, []string{"c", "b", "a"}},
		{"EndedOnly", SessionFilter{Ended: new(true)}, []string{"d"}},
		{"Page1", SessionFilter{Limit: 2}, []string{"d", "c"}},
		{"Page2", SessionFilter{Limit: 2, Offset: 2}, []string{"b", "a"}},
		{"PastTheEnd", SessionFilter{Offset: 10}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(tt.f)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ListSessions(%+v) (-want +got):\n%s", tt.f, diff)
			}
		})
	}
	if _, err := s.ListSessions(ctx, SessionFilter{Limit: -1}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("negative limit = %v, want ErrInvalidInput", err)
	}
}

// TestEnsureSession_FillsOnlyWhatIsUnset: an ensure never overwrites a set
// column; it fills empty ones and replaces the "unknown" source.
func testEnsureSession_FillsOnlyWhatIsUnset(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	if _, _, err := s.EnsureSession(ctx, NewSession{ID: "e", Model: "m1"}); err != nil {
		t.Fatal(err)
	}
	got, created, err := s.EnsureSession(ctx, NewSession{ID: "e", Source: "gateway", Model: "m2", Cwd: "/w", UserID: "u"})
	if err != nil || created {
		t.Fatal(created, err)
	}
	if got.Source != "gateway" || got.Model != "m1" || got.Cwd != "/w" || got.UserID != "u" {
		t.Errorf("after ensure: source %q model %q cwd %q user %q; want gateway m1 /w u", got.Source, got.Model, got.Cwd, got.UserID)
	}
	got, _, _ = s.EnsureSession(ctx, NewSession{ID: "e", Source: "cli", Cwd: "/other"})
	if got.Source != "gateway" || got.Cwd != "/w" {
		t.Errorf("a set source or cwd was overwritten: %q %q", got.Source, got.Cwd)
	}
	// A child fills an empty cwd from its parent.
	child := MustCreate(t, s, NewSession{ID: "child", ParentID: "e", Kind: ChildBranch})
	if child.Cwd != "/w" {
		t.Errorf("child cwd = %q, want the parent's /w", child.Cwd)
	}
}
