package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"
)

// Issue 35 item 8: one rule of what a child is to its parent, used by
// every surface. For each kind, every surface — the session lists and
// their counts (SQL), the conversation listing, the lineage and tip,
// resume, the lineage's display, lineage-wide flags, the conversation's
// last activity and the delete cascade (Go) — answers as
// ChildKind.Continues, Listed and DiesWithParent say.
func testChildKindRule_EverySurface(t *testing.T, open Opener) {
	kinds := []ChildKind{ChildCompression, ChildBranch, ChildReset, ChildDelegate, ChildTool, ""}
	for _, k := range kinds {
		name := string(k)
		if name == "" {
			name = "unknown"
		}
		t.Run(name, func(t *testing.T) {
			s := open(t, Options{})
			ctx := t.Context()
			MustCreate(t, s, NewSession{ID: "parent"})
			AppendTexts(t, s, "parent", "the parent's turn")
			if k == ChildCompression {
				continueAs(t, s, "parent", "child")
			} else {
				MustCreate(t, s, NewSession{ID: "child", ParentID: "parent", Kind: k})
			}
			AppendTexts(t, s, "child", "the child's turn")

			listed := slices.Contains(RecentIDs(t, s, RecentQuery{}), "child")
			if listed != k.Listed() {
				t.Errorf("session list shows the child: %v, Listed() = %v", listed, k.Listed())
			}
			c, err := s.CountSessions(ctx, RecentQuery{})
			if err != nil || c.Total != int64(1+map[bool]int{true: 1}[k.Listed()]) {
				t.Errorf("CountSessions = %d, %v; want it to agree with Listed() = %v", c.Total, err, k.Listed())
			}
			parentShown := slices.Contains(RecentIDs(t, s, RecentQuery{Conversations: true}), "parent")
			if parentShown == k.Continues() {
				t.Errorf("conversation list shows the parent: %v, Continues() = %v", parentShown, k.Continues())
			}
			lineage, err := s.Lineage(ctx, "parent")
			if err != nil {
				t.Fatal(err)
			}
			if inLineage := len(lineage) == 2; inLineage != k.Continues() {
				t.Errorf("lineage of the parent has %d sessions, Continues() = %v", len(lineage), k.Continues())
			}
			rp, err := s.Resume(ctx, "parent")
			if err != nil {
				t.Fatal(err)
			}
			if resumed := rp.Tip.ID == "child"; resumed != k.Continues() {
				t.Errorf("resume of the parent goes on in %s, Continues() = %v", rp.Tip.ID, k.Continues())
			}
			display, err := s.Conversation(ctx, "child", ConversationOptions{Lineage: true})
			if err != nil {
				t.Fatal(err)
			}
			showsParent := slices.ContainsFunc(display, func(m Message) bool { return strings.Contains(m.Content, "the parent's turn") })
			if showsParent != k.Continues() {
				t.Errorf("the child's display shows the parent's turn: %v, Continues() = %v", showsParent, k.Continues())
			}
			if err := s.TouchActivity(ctx, "parent", time.Now().Add(time.Hour), "", ""); err != nil {
				t.Fatal(err)
			}
			child, err := s.Session(ctx, "child")
			if err != nil {
				t.Fatal(err)
			}
			if moved := child.ConversationActiveAt.After(time.Now()); moved != k.Continues() {
				t.Errorf("the parent's heartbeat moved the child's conversation activity: %v, Continues() = %v", moved, k.Continues())
			}
			if _, err := s.SetArchived(ctx, "parent", true); err != nil {
				t.Fatal(err)
			}
			if child, err = s.Session(ctx, "child"); err != nil {
				t.Fatal(err)
			}
			if child.Archived != k.Continues() {
				t.Errorf("archiving the parent archived the child: %v, Continues() = %v", child.Archived, k.Continues())
			}
			set, err := s.DeletionSet(ctx, "parent")
			if err != nil {
				t.Fatal(err)
			}
			if dies := slices.Contains(set, "child"); dies != k.DiesWithParent() {
				t.Errorf("deletion set of the parent %v, DiesWithParent() = %v", set, k.DiesWithParent())
			}
			if k == ChildCompression {
				return // the parent is a continued conversation's; a delete by id orphans the tip (DeleteSession's tests)
			}
			if _, err := s.DeleteSession(ctx, "parent", DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			_, err = s.Session(ctx, "child")
			if gone := err != nil; gone != k.DiesWithParent() {
				t.Errorf("after deleting the parent the child is gone: %v (%v), DiesWithParent() = %v", gone, err, k.DiesWithParent())
			}
		})
	}
}
