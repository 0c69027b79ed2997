package db

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// setParentKind links child to parent with kind, as the lineage code
// does (the columns have no public setter on this branch).
func setParentKind(t *testing.T, s *Store, child, parent, kind string) {
	t.Helper()
	err := s.write(t.Context(), "test link", child, s.opts.WritePatience, func(ctx context.Context, tx genDBTX) error {
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET parent_session_id = ?, parent_kind = ? WHERE id = ?",
			parent, kind, child)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A file from before titles were scoped per user keeps its titles and
// gains the per-user rule on open.
func TestOpen_MigratesTitlesToPerUserUniqueness(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, NewSession{ID: "ann-1", UserID: "ann", Title: "New chat"})
	mustCreate(t, s, NewSession{ID: "bob-1", UserID: "bob"})
	s.Close()
	migrateDownTo(t, path, 6) // back to the store-wide title index
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, _ := titleOf(t, s, "ann-1"); got != "New chat" {
		t.Errorf("title after migration %q, want New chat", got)
	}
	if err := s.SetTitle(t.Context(), "bob-1", "New chat"); err != nil {
		t.Errorf("a second user's New chat after migration: %v", err)
	}
}

// A continuation takes its title from a compression ancestor, any number
// of compression links up — and only through compression links.
func TestSetTitle_TakesOverFromCompressionAncestor(t *testing.T) {
	tests := []struct {
		name string
		// links: child -> parent, kind, in creation order; every id in
		// them is created. root holds the title "Chat" first.
		links  [][3]string
		taker  string
		wantOK bool
	}{
		{"Child", [][3]string{{"c1", "root", "compression"}}, "c1", true},
		{"Grandchild", [][3]string{{"c1", "root", "compression"}, {"c2", "c1", "compression"}}, "c2", true},
		{"BranchChild", [][3]string{{"b1", "root", "branch"}}, "b1", false},
		{"CompressionBelowBranch", [][3]string{{"b1", "root", "branch"}, {"c1", "b1", "compression"}}, "c1", false},
		{"DelegateChild", [][3]string{{"d1", "root", "delegate"}}, "d1", false},
		{"Unrelated", [][3]string{{"c1", "other", "compression"}}, "c1", false},
		{"ParentHasTheTitle", [][3]string{{"c1", "root", "compression"}}, "root", true}, // its own title
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTestStore(t, Options{})
			ctx := t.Context()
			newTestSession(t, s, "root")
			newTestSession(t, s, "other")
			for _, l := range tt.links {
				newTestSession(t, s, l[0])
			}
			for _, l := range tt.links {
				setParentKind(t, s, l[0], l[1], l[2])
			}
			if err := s.SetTitle(ctx, "root", "Chat"); err != nil {
				t.Fatal(err)
			}
			err := s.SetTitle(ctx, tt.taker, "Chat")
			if tt.wantOK != (err == nil) {
				t.Fatalf("SetTitle(%s) = %v, want ok=%v", tt.taker, err, tt.wantOK)
			}
			if !tt.wantOK {
				if !errors.Is(err, ErrExists) {
					t.Errorf("error %v is not ErrExists", err)
				}
				if got, _ := titleOf(t, s, "root"); got != "Chat" {
					t.Errorf("root's title became %q after a refused takeover", got)
				}
				return
			}
			if got, rank := titleOf(t, s, tt.taker); got != "Chat" || rank != TitleUser {
				t.Errorf("%s: title %q rank %v, want Chat user", tt.taker, got, rank)
			}
			if tt.taker != "root" {
				if got, rank := titleOf(t, s, "root"); got != "" || rank != TitleDerived {
					t.Errorf("root kept title %q rank %v after the takeover", got, rank)
				}
			}
		})
	}
}

// An automatic takeover keeps the higher rank: a name a user chose stays a
// user's name as it moves down the chain.
func TestSetAutoTitle_TakeoverKeepsTheUserRank(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "root")
	newTestSession(t, s, "tip")
	setParentKind(t, s, "tip", "root", "compression")
	if err := s.SetTitle(ctx, "root", "Chat"); err != nil {
		t.Fatal(err)
	}
	applied, err := s.SetAutoTitle(ctx, "tip", "Chat", TitleDerived)
	if err != nil || !applied {
		t.Fatalf("SetAutoTitle = %v, %v", applied, err)
	}
	if got, rank := titleOf(t, s, "tip"); got != "Chat" || rank != TitleUser {
		t.Errorf("tip: %q %v, want Chat user", got, rank)
	}
}

// A cycle of compression links (a damaged file, a bad import) must not
// hang the ancestor walk: the cap ends it.
func TestSetTitle_CompressionCycleEnds(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	for _, id := range []string{"a", "b", "owner"} {
		newTestSession(t, s, id)
	}
	setParentKind(t, s, "a", "b", "compression")
	setParentKind(t, s, "b", "a", "compression")
	if err := s.SetTitle(ctx, "owner", "Taken"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTitle(ctx, "a", "Taken"); !errors.Is(err, ErrExists) {
		t.Errorf("SetTitle across a cycle = %v, want ErrExists", err)
	}
	if err := s.SetTitle(ctx, "b", "Mine"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTitle(ctx, "a", "Mine"); err != nil {
		t.Errorf("SetTitle from a cyclic compression ancestor = %v, want the takeover", err)
	}
}
