package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

func idsOf(sums []SessionSummary) []string {
	ids := make([]string, len(sums))
	for i, s := range sums {
		ids[i] = s.ID
	}
	return ids
}

func testRecentSessions_Filters(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	for _, n := range []NewSession{
		{ID: "ann-cli", UserID: "ann", Source: "cli", Cwd: "/src/app"},
		{ID: "ann-web", UserID: "ann", Source: "web", Cwd: "/src/app/web"},
		{ID: "bob-cron", UserID: "bob", Source: "cron", Cwd: "/src/apple"},
		{ID: "anon-cli", Source: "cli"},
		{ID: "hidden", Source: "cli"},
		{ID: "archived", Source: "web"},
	} {
		MustCreate(t, s, n)
		Tick()
	}
	mid := time.Now()
	Tick()
	MustCreate(t, s, NewSession{ID: "late", Source: "web"})
	if _, err := s.SetHidden(ctx, "hidden", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetArchived(ctx, "archived", true); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	tests := []struct {
		name string
		q    RecentQuery
		want []string
	}{
		{"Everything", RecentQuery{}, []string{"late", "archived", "anon-cli", "bob-cron", "ann-web", "ann-cli"}},
		{"User", RecentQuery{UserID: "ann"}, []string{"ann-web", "ann-cli"}},
		{"Sources", RecentQuery{Sources: []string{"cli", "cron"}}, []string{"anon-cli", "bob-cron", "ann-cli"}},
		{"ExcludeSources", RecentQuery{ExcludeSources: []string{"web", "cron"}}, []string{"anon-cli", "ann-cli"}},
		{"Archived", RecentQuery{Archived: &yes}, []string{"archived"}},
		{"NotArchived", RecentQuery{Archived: &no, Sources: []string{"web"}}, []string{"late", "ann-web"}},
		{"CwdPrefix", RecentQuery{Cwd: "/src/app/"}, []string{"ann-web", "ann-cli"}},
		{"CwdRoot", RecentQuery{Cwd: "/", UserID: "bob"}, []string{"bob-cron"}},
		{"StartedSince", RecentQuery{StartedSince: mid}, []string{"late"}},
		{"ActiveSince", RecentQuery{ActiveSince: mid}, []string{"late"}},
		{"IncludeHidden", RecentQuery{IncludeHidden: true, Sources: []string{"cli"}}, []string{"hidden", "anon-cli", "ann-cli"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RecentIDs(t, s, tt.q)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			c, err := s.CountSessions(ctx, tt.q)
			if err != nil || c.Total != int64(len(tt.want)) {
				t.Errorf("CountSessions = %+v, %v; want a total of %d", c, err, len(tt.want))
			}
		})
	}
	if _, err := s.AppendMessage(ctx, "ann-cli", NewMessage{Role: RoleUser, Content: "back again"}); err != nil {
		t.Fatal(err)
	}
	if got := RecentIDs(t, s, RecentQuery{ActiveSince: mid}); !cmp.Equal(got, []string{"ann-cli", "late"}) {
		t.Errorf("active since, after an append: %v, want [ann-cli late]", got)
	}
	c, err := s.CountSessions(ctx, RecentQuery{IncludeHidden: true})
	want := SessionCounts{Total: 7, Archived: 1,
		BySource: map[string]int64{"cli": 3, "web": 3, "cron": 1},
		ByUser:   map[string]int64{"ann": 2, "bob": 1, "": 4}}
	if diff := cmp.Diff(want, c); err != nil || diff != "" {
		t.Errorf("counts (-want +got):\n%s %v", diff, err)
	}
}

// Pages joined are the listing, with no session twice or missed, pinned
// first across page boundaries; a cursor from elsewhere is refused.
func testRecentSessions_KeysetPaging(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	var newestFirst []string
	for i := range 23 {
		id := fmt.Sprintf("s%02d", i)
		MustCreate(t, s, NewSession{ID: id})
		newestFirst = append([]string{id}, newestFirst...)
	}
	pinned := []string{"s03", "s11", "s17", "s20"}
	for _, id := range pinned {
		if _, err := s.SetPinned(ctx, id, true); err != nil {
			t.Fatal(err)
		}
	}
	pinnedFirst := []string{"s20", "s17", "s11", "s03"}
	for _, id := range newestFirst {
		if !strings.Contains(strings.Join(pinned, ","), id) {
			pinnedFirst = append(pinnedFirst, id)
		}
	}
	for _, tt := range []struct {
		name string
		q    RecentQuery
		want []string
	}{
		{"Plain", RecentQuery{Limit: 5}, newestFirst},
		{"PinnedFirst", RecentQuery{Limit: 3, PinnedFirst: true}, pinnedFirst},
		{"PinnedFillAPage", RecentQuery{Limit: 4, PinnedFirst: true}, pinnedFirst},
		{"OnePage", RecentQuery{Limit: 100, PinnedFirst: true}, pinnedFirst},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			q := tt.q
			for pages := 0; ; pages++ {
				page, err := s.RecentSessions(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Sessions) > q.Limit || pages > 30 {
					t.Fatalf("page %d has %d sessions (limit %d)", pages, len(page.Sessions), q.Limit)
				}
				got = append(got, idsOf(page.Sessions)...)
				if page.Next == "" {
					break
				}
				q.Cursor = page.Next
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pages joined (-want +got):\n%s", diff)
			}
		})
	}
	// Activity while paging moves a session to the top; the rest of the
	// listing neither repeats nor skips a row.
	first, _ := s.RecentSessions(ctx, RecentQuery{Limit: 5})
	Tick()
	AppendTexts(t, s, "s00", "bump")
	rest := RecentIDs(t, s, RecentQuery{Limit: 5, Cursor: first.Next})
	if diff := cmp.Diff(newestFirst[5:len(newestFirst)-1], rest); diff != "" {
		t.Errorf("after a bump (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"garbage!", "Zm9v", "OTo5Onh4"} {
		if _, err := s.RecentSessions(ctx, RecentQuery{Cursor: bad}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("cursor %q: %v, want ErrInvalidInput", bad, err)
		}
	}
	if _, err := s.RecentSessions(ctx, RecentQuery{Limit: -1}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("negative limit: %v, want ErrInvalidInput", err)
	}
}

// A conversation that compression continued is one row, its tip; delegate
// and tool children show only when asked for.
func testRecentSessions_Conversations(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustCreate(t, s, NewSession{ID: "c1", Title: "Fix the build"})
	AppendTexts(t, s, "c1", "first")
	Tick()
	continueAs(t, s, "c1", "c2")
	Tick()
	MustCreate(t, s, NewSession{ID: "helper", ParentID: "c2", Kind: ChildDelegate})
	Tick()
	MustCreate(t, s, NewSession{ID: "other"})
	Tick()
	MustCreate(t, s, NewSession{ID: "fork", ParentID: "other", Kind: ChildBranch})

	for _, tt := range []struct {
		q    RecentQuery
		want []string
	}{
		{RecentQuery{}, []string{"fork", "other", "c2", "c1"}},
		{RecentQuery{Conversations: true}, []string{"fork", "other", "c2"}},
		{RecentQuery{Conversations: true, IncludeChildren: true}, []string{"fork", "other", "helper", "c2"}},
	} {
		if diff := cmp.Diff(tt.want, RecentIDs(t, s, tt.q)); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tt.q, diff)
		}
	}
	page, _ := s.RecentSessions(t.Context(), RecentQuery{Conversations: true})
	if tip := page.Sessions[2]; tip.Title != "Fix the build #2" || tip.Kind != ChildCompression || tip.ParentID != "c1" {
		t.Errorf("the conversation's row = %+v, want its tip", tip)
	}
}
