package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func testSetModel(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	if _, err := s.CreateSession(ctx, NewSession{ID: "s1", Source: "cli", Model: "gpt-4o", ModelConfig: `{"temperature":0.2}`}); err != nil {
		t.Fatal(err)
	}
	first, _ := s.AppendMessage(ctx, "s1", NewMessage{Role: RoleUser, Content: "hi"})
	s.RecordUsage(ctx, "s1", UsageUpdate{Usage: Usage{InputTokens: 100, APICalls: 1}})

	switched, err := s.SetModel(ctx, "s1", "claude-sonnet-4.5", "anthropic")
	if err != nil || !switched {
		t.Fatalf("SetModel = %v, %v", switched, err)
	}
	if again, err := s.SetModel(ctx, "s1", "claude-sonnet-4.5", "anthropic"); err != nil || again {
		t.Errorf("setting the same model again = %v, %v; want no switch", again, err)
	}
	s.AppendMessage(ctx, "s1", NewMessage{Role: RoleAssistant, Content: "hello"})
	s.RecordUsage(ctx, "s1", UsageUpdate{Usage: Usage{InputTokens: 50, APICalls: 1}})

	sess, _ := s.Session(ctx, "s1")
	if sess.Model != "claude-sonnet-4.5" || sess.ModelConfig != `{"model":"claude-sonnet-4.5","provider":"anthropic","temperature":0.2}` {
		t.Errorf("session after the switch: model %q, config %s", sess.Model, sess.ModelConfig)
	}
	sw, err := s.ModelSwitches(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelSwitch{{From: "gpt-4o", To: "claude-sonnet-4.5", Provider: "anthropic", AfterMessageID: first}}
	if diff := cmp.Diff(want, sw, cmpopts.IgnoreFields(ModelSwitch{}, "At")); diff != "" {
		t.Errorf("switches (-want +got):\n%s", diff)
	}
	_, byModel, err := s.SessionUsage(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, m := range byModel {
		got[m.Model] = m.InputTokens
	}
	if diff := cmp.Diff(map[string]int64{"gpt-4o": 100, "claude-sonnet-4.5": 50}, got); diff != "" {
		t.Errorf("usage by model shows the switch (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		id, model string
		want      error
	}{{"ghost", "m", ErrNotFound}, {"s1", "", ErrInvalidInput}} {
		if _, err := s.SetModel(ctx, tt.id, tt.model, ""); !errors.Is(err, tt.want) {
			t.Errorf("SetModel(%q, %q) = %v, want %v", tt.id, tt.model, err, tt.want)
		}
	}
}

func testSetWorkspaceAndSystemPrompt(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	s.CreateSession(ctx, NewSession{ID: "s1", Source: "cli", Cwd: "/src/a", SystemPrompt: "old"})
	steps := []struct {
		name              string
		up                WorkspaceUpdate
		cwd, branch, root string
	}{
		{"BranchAndRoot", WorkspaceUpdate{GitBranch: new("main"), GitRepoRoot: new("/src/a")}, "/src/a", "main", "/src/a"},
		{"CwdOnly", WorkspaceUpdate{Cwd: new("/src/a/pkg")}, "/src/a/pkg", "main", "/src/a"},
		{"NewBranch", WorkspaceUpdate{GitBranch: new("fix-retry")}, "/src/a/pkg", "fix-retry", "/src/a"},
		{"LeaveRepo", WorkspaceUpdate{Cwd: new("/tmp"), GitBranch: new(""), GitRepoRoot: new("")}, "/tmp", "", ""},
	}
	for _, st := range steps {
		if err := s.SetWorkspace(ctx, "s1", st.up); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got, _ := s.Session(ctx, "s1")
		if got.Cwd != st.cwd || got.GitBranch != st.branch || got.GitRepoRoot != st.root {
			t.Errorf("%s: workspace = %q %q %q, want %q %q %q", st.name, got.Cwd, got.GitBranch, got.GitRepoRoot, st.cwd, st.branch, st.root)
		}
	}
	if err := s.SetSystemPrompt(ctx, "s1", "You are a careful reviewer."); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Session(ctx, "s1"); got.SystemPrompt != "You are a careful reviewer." {
		t.Errorf("system prompt = %q", got.SystemPrompt)
	}
	if err := s.SetWorkspace(ctx, "ghost", WorkspaceUpdate{Cwd: new("/")}); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetWorkspace(ghost) = %v, want ErrNotFound", err)
	}
	if err := s.SetSystemPrompt(ctx, "s1", "\xff"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("invalid UTF-8 prompt = %v, want ErrInvalidInput", err)
	}
}

func testCompressionFailureCooldown(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	newTestSession(t, s, "s1")
	holder := NewHolder("compressor")
	if err := s.CompressionFailed(ctx, "s1", time.Hour, "summary model timed out"); err != nil {
		t.Fatal(err)
	}
	// A second failure with a shorter cooldown keeps the later deadline.
	if err := s.CompressionFailed(ctx, "s1", time.Minute, "provider 529"); err != nil {
		t.Fatal(err)
	}
	sess, _ := s.Session(ctx, "s1")
	if left := time.Until(sess.CompressionRetryAfter); left < 50*time.Minute || sess.CompressionError != "provider 529" {
		t.Errorf("cooldown = %v left, error %q; want about an hour and the latest error", left, sess.CompressionError)
	}
	if _, got, err := s.AcquireCompressionLock(ctx, "s1", holder, 0); !errors.Is(err, ErrCoolingDown) || got {
		t.Fatalf("lock during the cooldown = %v, %v; want ErrCoolingDown", got, err)
	}
	if lock, _ := s.CompressionLock(ctx, "s1"); lock.Holder != "" {
		t.Errorf("a lock was taken during the cooldown: %+v", lock)
	}
	// Once the time has passed (moved here by hand), compression may run.
	e.Exec(t, s, "UPDATE sessions SET compression_retry_after = $1 WHERE id = 's1'", time.Now().UnixMilli()-1)
	if _, got, err := s.AcquireCompressionLock(ctx, "s1", holder, 0); err != nil || !got {
		t.Errorf("lock after the cooldown = %v, %v", got, err)
	}
	if sess, _ := s.Session(ctx, "s1"); sess.CompressionError != "provider 529" {
		t.Errorf("the error was not kept: %q", sess.CompressionError)
	}
	if err := s.ClearCompressionFailure(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if sess, _ := s.Session(ctx, "s1"); !sess.CompressionRetryAfter.IsZero() || sess.CompressionError != "" {
		t.Errorf("after clearing: %v %q", sess.CompressionRetryAfter, sess.CompressionError)
	}
	if err := s.CompressionFailed(ctx, "s1", 0, "x"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("zero cooldown = %v, want ErrInvalidInput", err)
	}
	if err := s.CompressionFailed(ctx, "ghost", time.Hour, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session = %v, want ErrNotFound", err)
	}
}

func testReopenSession(t *testing.T, e Engine) {
	ctx := t.Context()
	s := bulkStore(t, e, []bulkSpec{
		{id: "ended", source: "cli", messages: 1, ended: true},
		{id: "live", source: "cli"},
		{id: "root", source: "cli", messages: 1},
		{id: "tip", parent: "root", kind: ChildCompression},
	})
	reopened, err := s.ReopenSession(ctx, "ended")
	if err != nil || !reopened {
		t.Fatalf("ReopenSession(ended) = %v, %v", reopened, err)
	}
	if got, _ := s.Session(ctx, "ended"); got.Ended() || got.EndReason != "" {
		t.Errorf("reopened session still ended: %v %q", got.EndedAt, got.EndReason)
	}
	if _, err := s.AppendMessage(ctx, "ended", NewMessage{Role: RoleUser, Content: "back again"}); err != nil {
		t.Errorf("append after reopen: %v", err)
	}
	if again, err := s.ReopenSession(ctx, "live"); err != nil || again {
		t.Errorf("ReopenSession(live) = %v, %v; want false, nil", again, err)
	}
	if _, err := s.ReopenSession(ctx, "root"); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("ReopenSession(compressed parent) = %v, want ErrSessionClosed", err)
	}
	if got, _ := s.Session(ctx, "root"); got.EndReason != "compression" {
		t.Errorf("the refused reopen changed the parent: %q", got.EndReason)
	}
	if _, err := s.ReopenSession(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReopenSession(ghost) = %v, want ErrNotFound", err)
	}
	// Ended "compression" with no continuation: reopened and re-ended
	// like any other (issue 34, item 5).
	newTestSession(t, s, "uncontinued")
	if _, err := s.EndSession(ctx, "uncontinued", "compression"); err != nil {
		t.Fatal(err)
	}
	if reopened, err := s.ReopenSession(ctx, "uncontinued"); err != nil || !reopened {
		t.Fatalf("ReopenSession(ended compression, no continuation) = %v, %v; want true, nil", reopened, err)
	}
	if _, err := s.AppendMessage(ctx, "uncontinued", NewMessage{Role: RoleUser, Content: "go on"}); err != nil {
		t.Errorf("append after reopen: %v", err)
	}
	if _, err := s.EndSession(ctx, "uncontinued", "done"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Session(ctx, "uncontinued"); got.EndReason != "done" {
		t.Errorf("re-ended with reason %q, want done", got.EndReason)
	}
}

// testBackfillRepoRoots: sessions with a working directory and no
// repository root get the root the resolver names for their directory;
// set roots stay, and a directory the resolver cannot place is left
// (issue 34, "back-filling repo roots").
func testBackfillRepoRoots(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	for _, n := range []NewSession{
		{ID: "a1", Cwd: "/src/app"}, {ID: "a2", Cwd: "/src/app"}, {ID: "w1", Cwd: "/src/app/web"},
		{ID: "set", Cwd: "/src/app"}, {ID: "tmp", Cwd: "/tmp"}, {ID: "none"},
	} {
		n.Source = "cli"
		MustCreate(t, s, n)
	}
	root := "/src/own-root"
	if err := s.SetWorkspace(ctx, "set", WorkspaceUpdate{GitRepoRoot: &root}); err != nil {
		t.Fatal(err)
	}
	var asked []string
	n, err := s.BackfillRepoRoots(ctx, func(cwd string) string {
		asked = append(asked, cwd)
		if strings.HasPrefix(cwd, "/src/app") {
			return "/src/app"
		}
		return ""
	})
	if err != nil || n != 3 {
		t.Fatalf("BackfillRepoRoots = %d, %v; want 3 sessions", n, err)
	}
	if diff := cmp.Diff([]string{"/src/app", "/src/app/web", "/tmp"}, asked); diff != "" {
		t.Errorf("directories asked (-want +got):\n%s", diff)
	}
	for id, want := range map[string]string{"a1": "/src/app", "a2": "/src/app", "w1": "/src/app", "set": "/src/own-root", "tmp": "", "none": ""} {
		if got, _ := s.Session(ctx, id); got.GitRepoRoot != want {
			t.Errorf("%s: repo root %q, want %q", id, got.GitRepoRoot, want)
		}
	}
	if n, err := s.BackfillRepoRoots(ctx, func(string) string { return "/x" }); err != nil || n != 1 {
		t.Errorf("second backfill = %d, %v; want only tmp", n, err)
	}
	if _, err := s.BackfillRepoRoots(ctx, nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("BackfillRepoRoots(nil) = %v, want ErrInvalidInput", err)
	}
}
