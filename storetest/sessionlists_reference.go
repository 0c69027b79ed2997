package storetest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// testDelegate_StaysHiddenWithoutItsParent: a delegate keeps its mark
// (Session.DelegatedFrom) when its parent link goes — lost as deleting
// a parent loses it, or left out of an import — and session lists keep
// leaving it out unless they ask for children; a branch that loses its
// parent is listed as any root.
func testDelegate_StaysHiddenWithoutItsParent(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	MustCreate(t, s, NewSession{ID: "p", Source: "cli"})
	d := MustCreate(t, s, NewSession{ID: "d", Source: "cli", ParentID: "p", Kind: ChildDelegate})
	MustCreate(t, s, NewSession{ID: "b", Source: "cli", ParentID: "p", Kind: ChildBranch})
	if d.DelegatedFrom != "p" {
		t.Errorf("DelegatedFrom = %q, want p", d.DelegatedFrom)
	}
	// The links go as SessionOrphanChildren (and another program's
	// delete, through the foreign key) lose them.
	e.Exec(t, s, "UPDATE sessions SET parent_session_id = NULL, parent_kind = NULL WHERE id IN ('d', 'b')")
	if d, err := s.Session(ctx, "d"); err != nil || d.ParentID != "" || d.Kind != "" || d.DelegatedFrom != "p" {
		t.Errorf("orphaned delegate = parent %q kind %q delegated from %q, %v; want no parent, from p", d.ParentID, d.Kind, d.DelegatedFrom, err)
	}
	sorted := func(ids []string) []string {
		out := append([]string(nil), ids...)
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j] < out[i] {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	}
	if diff := cmp.Diff([]string{"b", "p"}, sorted(RecentIDs(t, s, RecentQuery{}))); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b", "d", "p"}, sorted(RecentIDs(t, s, RecentQuery{IncludeChildren: true}))); diff != "" {
		t.Errorf("listed with children (-want +got):\n%s", diff)
	}
	if c, err := s.CountSessions(ctx, RecentQuery{}); err != nil || c.Total != 2 {
		t.Errorf("CountSessions = %+v, %v; want 2", c, err)
	}
	if page, err := s.RecentSessions(ctx, RecentQuery{IncludeChildren: true}); err == nil {
		for _, sum := range page.Sessions {
			if sum.ID == "d" && sum.DelegatedFrom != "p" {
				t.Errorf("summary of d: DelegatedFrom %q, want p", sum.DelegatedFrom)
			}
		}
	}

	// Exported without its parent, and imported: detached, still marked.
	var buf bytes.Buffer
	if _, err := s.Export(ctx, &buf, ExportOptions{SessionID: "d"}); err != nil {
		t.Fatal(err)
	}
	other := e.Open(t, Options{})
	if _, err := other.Import(ctx, &buf, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// A file written before the mark: the kind of a delegate whose parent
	// is not in the file says it.
	old := ExportHeader + SessionLine("x", "gone", "delegate")
	if res, err := other.Import(ctx, strings.NewReader(old), ImportOptions{}); err != nil || res.Detached != 1 {
		t.Fatalf("import = %+v, %v; want one detached", res, err)
	}
	for id, from := range map[string]string{"d": "p", "x": "gone"} {
		if got, err := other.Session(ctx, id); err != nil || got.ParentID != "" || got.DelegatedFrom != from {
			t.Errorf("imported %s = parent %q delegated from %q, %v; want detached, from %s", id, got.ParentID, got.DelegatedFrom, err, from)
		}
	}
	if ids := RecentIDs(t, other, RecentQuery{}); len(ids) != 0 {
		t.Errorf("imported delegates listed: %v", ids)
	}
}

// testRecentSessions_ByConversationStart: RecentQuery.ByStart lists by
// when each conversation began — a compression continuation at its root's
// start — keyset-paged (every page the same order, a cursor only for a
// listing of its own order), pinned first when asked; the rows carry the
// compact projection's fields.
func testRecentSessions_ByConversationStart(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	base := time.Now().Add(-time.Hour).UnixMilli()
	for i, id := range []string{"root", "a", "b", "c"} {
		MustCreate(t, s, NewSession{ID: id, Source: "cli"})
		e.Exec(t, s, "UPDATE sessions SET started_at = $1 WHERE id = $2", base+int64(i)*1000, id)
	}
	AppendTexts(t, s, "root", "the oldest conversation")
	h := LockFor(t, s, "root")
	if _, err := s.PublishCompressionChild(ctx, "root", Continuation{Child: NewSession{ID: "tip"}, Holder: h,
		Messages: []NewMessage{{Role: RoleUser, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	AppendTexts(t, s, "a", "a is active now") // a is the most recently active
	branch, cwd := "main", "/src/app"
	if err := s.SetWorkspace(ctx, "b", WorkspaceUpdate{Cwd: &cwd, GitBranch: &branch, GitRepoRoot: &cwd}); err != nil {
		t.Fatal(err)
	}
	tip, err := s.Session(ctx, "tip")
	if err != nil || tip.RootStartedAt.UnixMilli() != base {
		t.Fatalf("tip.RootStartedAt = %v, %v; want the root's start", tip.RootStartedAt, err)
	}
	conv := RecentQuery{Conversations: true, ByStart: true}
	if diff := cmp.Diff([]string{"c", "b", "a", "tip"}, RecentIDs(t, s, conv)); diff != "" {
		t.Errorf("by start (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "tip", "c", "b"}, RecentIDs(t, s, RecentQuery{Conversations: true})); diff != "" {
		t.Errorf("by activity (-want +got):\n%s", diff)
	}
	// Page by page, one row each.
	var paged []string
	q := conv
	q.Limit = 1
	for {
		page, err := s.RecentSessions(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, sum := range page.Sessions {
			paged = append(paged, sum.ID)
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if diff := cmp.Diff([]string{"c", "b", "a", "tip"}, paged); diff != "" {
		t.Errorf("paged by start (-want +got):\n%s", diff)
	}
	activity, err := s.RecentSessions(ctx, RecentQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecentSessions(ctx, RecentQuery{ByStart: true, Cursor: activity.Next}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("an activity cursor in a by-start listing: %v, want ErrInvalidInput", err)
	}
	if _, err := s.SetPinned(ctx, "a", true); err != nil {
		t.Fatal(err)
	}
	pinned := conv
	pinned.PinnedFirst, pinned.Limit = true, 2
	var withPins []string
	for {
		page, err := s.RecentSessions(ctx, pinned)
		if err != nil {
			t.Fatal(err)
		}
		for _, sum := range page.Sessions {
			withPins = append(withPins, sum.ID)
		}
		if page.Next == "" {
			break
		}
		pinned.Cursor = page.Next
	}
	if diff := cmp.Diff([]string{"a", "c", "b", "tip"}, withPins); diff != "" {
		t.Errorf("pinned first by start (-want +got):\n%s", diff)
	}
	page, err := s.RecentSessions(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range page.Sessions {
		switch sum.ID {
		case "b":
			if sum.GitBranch != "main" || sum.GitRepoRoot != "/src/app" || sum.Cwd != "/src/app" {
				t.Errorf("b's workspace in the list: %q %q %q", sum.GitBranch, sum.GitRepoRoot, sum.Cwd)
			}
		case "tip":
			if sum.RootStartedAt.UnixMilli() != base || !sum.StartedAt.After(sum.RootStartedAt) {
				t.Errorf("tip: root started %v, started %v; want the root's start before its own", sum.RootStartedAt, sum.StartedAt)
			}
		}
	}
}
