package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

func testSetTitle(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	steps := []struct {
		set      string
		want     string
		wantRank TitleRank
	}{
		{"Fix the build", "Fix the build", TitleUser},
		{"Fix the build", "Fix the build", TitleUser}, // setting its own title again is no conflict
		{"  Padded\t", "Padded", TitleUser},
		{strings.Repeat("題", 100), strings.Repeat("題", 100), TitleUser},
		{"", "", TitleDerived}, // clears
	}
	for _, st := range steps {
		if err := s.SetTitle(ctx, "s1", st.set); err != nil {
			t.Fatalf("SetTitle(%q): %v", st.set, err)
		}
		if got, rank := TitleOf(t, s, "s1"); got != st.want || rank != st.wantRank {
			t.Errorf("after SetTitle(%q): title %q rank %v, want %q %v", st.set, got, rank, st.want, st.wantRank)
		}
	}
}

func testSetTitle_Refusals(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	if err := s.SetTitle(ctx, "s1", "Keep me"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, id, title string
		want            error
	}{
		{"TooLong", "s1", strings.Repeat("t", 101), ErrInvalidInput},
		{"TooLongCJK", "s1", " " + strings.Repeat("題", 101) + " ", ErrInvalidInput},
		{"InvalidUTF8", "s1", "bad \xff title", ErrInvalidInput},
		{"EmptyID", "", "x", ErrInvalidInput},
		{"UnknownSession", "ghost", "x", ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.SetTitle(ctx, tt.id, tt.title)
			if !errors.Is(err, tt.want) {
				t.Fatalf("SetTitle(%q, %q) = %v, want %v", tt.id, tt.title, err, tt.want)
			}
			if got, _ := TitleOf(t, s, "s1"); got != "Keep me" {
				t.Errorf("a refused SetTitle changed the title to %q", got)
			}
		})
	}
}

func testSetTitle_TakenByAnotherSession(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "owner")
	newTestSession(t, s, "other")
	if err := s.SetTitle(ctx, "owner", "Shared"); err != nil {
		t.Fatal(err)
	}
	err := s.SetTitle(ctx, "other", "Shared")
	if !errors.Is(err, ErrExists) {
		t.Fatalf("SetTitle of a taken title = %v, want ErrExists", err)
	}
	var inUse *TitleInUseError
	if !errors.As(err, &inUse) || inUse.SessionID != "owner" || inUse.Title != "Shared" {
		t.Errorf("error %v does not name the owner (%+v)", err, inUse)
	}
	var e *Error
	if !errors.As(err, &e) || e.SessionID != "other" {
		t.Errorf("error %v is not an *Error for session other", err)
	}
	if got, _ := TitleOf(t, s, "owner"); got != "Shared" {
		t.Errorf("owner lost its title: %q", got)
	}
	if got, _ := TitleOf(t, s, "other"); got != "" {
		t.Errorf("other got title %q", got)
	}
	// Auto titles obey the same uniqueness.
	if applied, err := s.SetAutoTitle(ctx, "other", "Shared", TitleGenerated); !errors.Is(err, ErrExists) || applied {
		t.Errorf("SetAutoTitle of a taken title = %v, %v; want false, ErrExists", applied, err)
	}
}

func testSetAutoTitle_Ranks(t *testing.T, open Opener) {
	tests := []struct {
		name        string
		start       func(s *Store) error // sets the starting title, if any
		rank        TitleRank
		wantApplied bool
		wantRank    TitleRank
	}{
		{"NoTitleDerived", nil, TitleDerived, true, TitleDerived},
		{"NoTitleGenerated", nil, TitleGenerated, true, TitleGenerated},
		{"DerivedOverDerived", auto(TitleDerived), TitleDerived, false, TitleDerived},
		{"GeneratedOverDerived", auto(TitleDerived), TitleGenerated, true, TitleGenerated},
		{"GeneratedOverGenerated", auto(TitleGenerated), TitleGenerated, false, TitleGenerated},
		{"DerivedUnderGenerated", auto(TitleGenerated), TitleDerived, false, TitleGenerated},
		{"GeneratedUnderUser", setUserTitle, TitleGenerated, false, TitleUser},
		{"DerivedUnderUser", setUserTitle, TitleDerived, false, TitleUser},
		{"AfterUserCleared", func(s *Store) error {
			if err := setUserTitle(s); err != nil {
				return err
			}
			return s.SetTitle(context.Background(), "s1", "")
		}, TitleDerived, true, TitleDerived},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t, Options{})
			newTestSession(t, s, "s1")
			before := ""
			if tt.start != nil {
				if err := tt.start(s); err != nil {
					t.Fatal(err)
				}
				before, _ = TitleOf(t, s, "s1")
			}
			applied, err := s.SetAutoTitle(t.Context(), "s1", "Auto", tt.rank)
			if err != nil || applied != tt.wantApplied {
				t.Fatalf("SetAutoTitle = %v, %v; want %v", applied, err, tt.wantApplied)
			}
			want := before
			if tt.wantApplied {
				want = "Auto"
			}
			if got, rank := TitleOf(t, s, "s1"); got != want || rank != tt.wantRank {
				t.Errorf("title %q rank %v, want %q %v", got, rank, want, tt.wantRank)
			}
		})
	}
}

func auto(rank TitleRank) func(*Store) error {
	return func(s *Store) error {
		_, err := s.SetAutoTitle(context.Background(), "s1", "Earlier "+rank.String(), rank)
		return err
	}
}

func setUserTitle(s *Store) error { return s.SetTitle(context.Background(), "s1", "Chosen") }

func testSetAutoTitle_Refusals(t *testing.T, open Opener) {
	s := open(t, Options{})
	newTestSession(t, s, "s1")
	tests := []struct {
		name, id, title string
		rank            TitleRank
		want            error
	}{
		{"UserRank", "s1", "x", TitleUser, ErrInvalidInput},
		{"UnknownRank", "s1", "x", TitleRank(7), ErrInvalidInput},
		{"NegativeRank", "s1", "x", TitleRank(-1), ErrInvalidInput},
		{"Empty", "s1", "", TitleGenerated, ErrInvalidInput},
		{"OnlyWhitespace", "s1", "  ", TitleGenerated, ErrInvalidInput},
		{"TooLong", "s1", strings.Repeat("x", 101), TitleGenerated, ErrInvalidInput},
		{"UnknownSession", "ghost", "x", TitleGenerated, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			applied, err := s.SetAutoTitle(t.Context(), tt.id, tt.title, tt.rank)
			if !errors.Is(err, tt.want) || applied {
				t.Fatalf("SetAutoTitle = %v, %v; want false, %v", applied, err, tt.want)
			}
			if got, _ := TitleOf(t, s, "s1"); got != "" {
				t.Errorf("a refused SetAutoTitle set %q", got)
			}
		})
	}
}

// A title given at creation was chosen by someone: it is a user's title,
// which automatic titles never replace.
func testCreateSession_TitleIsUserRank(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	sess, err := s.CreateSession(ctx, NewSession{ID: "titled", Title: "  Given  "})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Title != "Given" || sess.TitleRank != TitleUser {
		t.Errorf("created with a title: %q %v, want Given user", sess.Title, sess.TitleRank)
	}
	if applied, err := s.SetAutoTitle(ctx, "titled", "Generated", TitleGenerated); err != nil || applied {
		t.Errorf("SetAutoTitle over a creation title = %v, %v; want false, nil", applied, err)
	}
	plain := newTestSession(t, s, "plain")
	if plain.Title != "" || plain.TitleRank != TitleDerived {
		t.Errorf("created without a title: %q %v, want no title, derived", plain.Title, plain.TitleRank)
	}
	if blank, err := s.CreateSession(ctx, NewSession{ID: "blank", Title: " \u200b  "}); err != nil || blank.Title != "" || blank.TitleRank != TitleDerived {
		t.Errorf("CreateSession with an invisible title = %q %v, %v; want no title, derived", blank.Title, blank.TitleRank, err)
	}
}

// A new session's title clash is the same *TitleInUseError SetTitle gives,
// naming the holder; an existing session's title is never touched by
// EnsureSession, so a clashing one passed to it is no error.
func testCreateSession_TitleClashIsTitleInUseError(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, NewSession{ID: "holder", Title: "Trip"}); err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "existing")
	calls := map[string]func() error{
		"CreateSession": func() error { _, err := s.CreateSession(ctx, NewSession{ID: "new", Title: "Trip"}); return err },
		"EnsureSession": func() error { _, _, err := s.EnsureSession(ctx, NewSession{ID: "new", Title: " Trip "}); return err },
		"SetTitle":      func() error { return s.SetTitle(ctx, "existing", "Trip") },
	}
	for name, call := range calls {
		err := call()
		var inUse *TitleInUseError
		if !errors.As(err, &inUse) || !errors.Is(err, ErrExists) || inUse.SessionID != "holder" || inUse.Title != "Trip" {
			t.Errorf("%s: %v (%T), want a *TitleInUseError naming holder", name, err, err)
		}
		if err != nil && strings.Contains(err.Error(), "UNIQUE") {
			t.Errorf("%s: %q leaks the constraint text", name, err)
		}
	}
	if _, err := s.Session(ctx, "new"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a refused create left the session: %v", err)
	}
	sess, created, err := s.EnsureSession(ctx, NewSession{ID: "existing", Title: "Trip"})
	if err != nil || created || sess.Title != "" {
		t.Errorf("EnsureSession of an existing session with a taken title = %+v, %v, %v; want it unchanged", sess, created, err)
	}
}

// Eight sessions race for one title: exactly one gets it.
func testSetTitle_Race(t *testing.T, open Opener) {
	s := open(t, Options{})
	const n = 8
	for i := range n {
		newTestSession(t, s, fmt.Sprintf("s%d", i))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = s.SetTitle(t.Context(), fmt.Sprintf("s%d", i), "The one title")
		})
	}
	close(start)
	wg.Wait()
	winner, lost := "", 0
	for i, err := range errs {
		switch {
		case err == nil:
			if winner != "" {
				t.Errorf("two winners: %s and s%d", winner, i)
			}
			winner = fmt.Sprintf("s%d", i)
		case errors.Is(err, ErrExists):
			lost++
		default:
			t.Errorf("s%d: unexpected error %v", i, err)
		}
	}
	if winner == "" || lost != n-1 {
		t.Fatalf("winner %q, %d got ErrExists; want one winner and %d ErrExists", winner, lost, n-1)
	}
	if got, _ := TitleOf(t, s, winner); got != "The one title" {
		t.Errorf("winner %s has title %q", winner, got)
	}
}

// A title that only looks like another is the same title.
func testSetTitle_InvisibleCharactersCannotSpoof(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "a")
	newTestSession(t, s, "b")
	if err := s.SetTitle(ctx, "a", "helloworld"); err != nil {
		t.Fatal(err)
	}
	for _, spoof := range []string{"hello\u200bworld", "\u202ehelloworld", "hello\u2060world\ufeff", " helloworld\t"} {
		var inUse *TitleInUseError
		if err := s.SetTitle(ctx, "b", spoof); !errors.As(err, &inUse) || inUse.SessionID != "a" {
			t.Errorf("SetTitle(b, %q) = %v, want *TitleInUseError held by a", spoof, err)
		}
	}
	if err := s.SetTitle(ctx, "b", "Fix\u00a0the \u200bbuild\n"); err != nil {
		t.Fatal(err)
	}
	if got, _ := TitleOf(t, s, "b"); got != "Fix the build" {
		t.Errorf("stored title %q, want the sanitised form", got)
	}
	if err := s.SetTitle(ctx, "b", "\u200b \u202e"); err != nil {
		t.Fatalf("an invisible title: %v, want it to clear the title", err)
	}
	if got, _ := TitleOf(t, s, "b"); got != "" {
		t.Errorf("an invisible title left %q, want no title", got)
	}
}

// Two users may both have "New chat"; one user may not have it twice.
func testSetTitle_UniquePerUser(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	for _, n := range []NewSession{
		{ID: "ann-1", UserID: "ann"}, {ID: "ann-2", UserID: "ann"},
		{ID: "bob-1", UserID: "bob"}, {ID: "anon-1"}, {ID: "anon-2"},
	} {
		MustCreate(t, s, n)
	}
	for _, id := range []string{"ann-1", "bob-1", "anon-1"} {
		if err := s.SetTitle(ctx, id, "New chat"); err != nil {
			t.Fatalf("SetTitle(%s, New chat): %v", id, err)
		}
	}
	for id, holder := range map[string]string{"ann-2": "ann-1", "anon-2": "anon-1"} {
		var inUse *TitleInUseError
		if err := s.SetTitle(ctx, id, "New chat"); !errors.As(err, &inUse) || inUse.SessionID != holder {
			t.Errorf("SetTitle(%s, New chat) = %v, want in use by %s", id, err, holder)
		}
	}
	if _, err := s.CreateSession(ctx, NewSession{ID: "bob-2", UserID: "bob", Title: "New chat"}); !errors.Is(err, ErrExists) {
		t.Errorf("CreateSession(bob-2, New chat) = %v, want ErrExists", err)
	}
	if _, err := s.CreateSession(ctx, NewSession{ID: "cat-1", UserID: "cat", Title: "New chat"}); err != nil {
		t.Errorf("CreateSession for a third user: %v", err)
	}
	for user, want := range map[string]string{"ann": "ann-1", "bob": "bob-1", "": "anon-1", "cat": "cat-1"} {
		if got, err := s.SessionByTitle(ctx, user, "New chat"); err != nil || got.ID != want {
			t.Errorf("SessionByTitle(%q, New chat) = %s, %v; want %s", user, got.ID, err, want)
		}
	}
}

// Each continuation of a titled conversation is numbered, the parents keep
// their titles, and the conversation's name finds the newest.
func testPublishCompressionChild_NumbersTheTitle(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	MustCreate(t, s, NewSession{ID: "c1", UserID: "ann", Title: "Fix the build"})
	MustCreate(t, s, NewSession{ID: "other", UserID: "bob", Title: "Fix the build #7"})
	continueAs(t, s, "c1", "c2")
	continueAs(t, s, "c2", "c3")
	want := map[string]string{"c1": "Fix the build", "c2": "Fix the build #2", "c3": "Fix the build #3", "other": "Fix the build #7"}
	for id, title := range want {
		if got, _ := TitleOf(t, s, id); got != title {
			t.Errorf("%s titled %q, want %q", id, got, title)
		}
	}
	for title, id := range map[string]string{"Fix the build": "c3", "Fix the build #2": "c2", " Fix the\u200b build ": "c3"} {
		if got, err := s.SessionByTitle(ctx, "ann", title); err != nil || got.ID != id {
			t.Errorf("SessionByTitle(ann, %q) = %s, %v; want %s", title, got.ID, err, id)
		}
	}
	if _, err := s.SessionByTitle(ctx, "ann", "Fix the"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SessionByTitle of a prefix = %v, want ErrNotFound", err)
	}
	if _, err := s.SessionByTitle(ctx, "ann", "\u200b"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("SessionByTitle of an invisible title = %v, want ErrInvalidInput", err)
	}
	// A numbered title a user gave by hand counts too: the next is one past it.
	MustCreate(t, s, NewSession{ID: "d1", UserID: "ann", Title: "Plan #4"})
	continueAs(t, s, "d1", "d2")
	if got, _ := TitleOf(t, s, "d2"); got != "Plan #5" {
		t.Errorf("continuation of Plan #4 titled %q, want Plan #5", got)
	}
}

// setParentKind links child to parent by hand: a link the API refuses to
// make (a cycle, a kind changed after the fact), as a damaged or foreign
// file may hold.
func setParentKind(t *testing.T, e Engine, s *Store, child, parent, kind string) {
	t.Helper()
	e.Exec(t, s, "UPDATE sessions SET parent_session_id = $1, parent_kind = $2 WHERE id = $3", parent, kind, child)
}

// A continuation takes its title from a compression ancestor, any number
// of compression links up — and only through compression links.
func testSetTitle_TakesOverFromCompressionAncestor(t *testing.T, e Engine) {
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
			s := e.Open(t, Options{})
			ctx := t.Context()
			newTestSession(t, s, "root")
			newTestSession(t, s, "other")
			for _, l := range tt.links {
				newTestSession(t, s, l[0])
			}
			for _, l := range tt.links {
				setParentKind(t, e, s, l[0], l[1], l[2])
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
				if got, _ := TitleOf(t, s, "root"); got != "Chat" {
					t.Errorf("root's title became %q after a refused takeover", got)
				}
				return
			}
			if got, rank := TitleOf(t, s, tt.taker); got != "Chat" || rank != TitleUser {
				t.Errorf("%s: title %q rank %v, want Chat user", tt.taker, got, rank)
			}
			if tt.taker != "root" {
				if got, rank := TitleOf(t, s, "root"); got != "" || rank != TitleDerived {
					t.Errorf("root kept title %q rank %v after the takeover", got, rank)
				}
			}
		})
	}
}

// An automatic takeover keeps the higher rank: a name a user chose stays a
// user's name as it moves down the chain.
func testSetAutoTitle_TakeoverKeepsTheUserRank(t *testing.T, e Engine) {
	s := e.Open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "root")
	newTestSession(t, s, "tip")
	setParentKind(t, e, s, "tip", "root", "compression")
	if err := s.SetTitle(ctx, "root", "Chat"); err != nil {
		t.Fatal(err)
	}
	applied, err := s.SetAutoTitle(ctx, "tip", "Chat", TitleDerived)
	if err != nil || !applied {
		t.Fatalf("SetAutoTitle = %v, %v", applied, err)
	}
	if got, rank := TitleOf(t, s, "tip"); got != "Chat" || rank != TitleUser {
		t.Errorf("tip: %q %v, want Chat user", got, rank)
	}
}

// A cycle of compression links (a damaged file, a bad import) must not
// hang the ancestor walk: the cap ends it.
func testSetTitle_CompressionCycleEnds(t *testing.T, e Engine) {
	s := e.Open(t, Options{})
	ctx := t.Context()
	for _, id := range []string{"a", "b", "owner"} {
		newTestSession(t, s, id)
	}
	setParentKind(t, e, s, "a", "b", "compression")
	setParentKind(t, e, s, "b", "a", "compression")
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
