package storetest

import (
	"errors"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// archiveFlags reads (Archived, AutoArchived) of each id.
func archiveFlags(t *testing.T, s *Store, ids ...string) map[string][2]bool {
	t.Helper()
	out := map[string][2]bool{}
	for _, id := range ids {
		sess, err := s.Session(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = [2]bool{sess.Archived, sess.AutoArchived}
	}
	return out
}

var (
	live     = [2]bool{false, false}
	swept    = [2]bool{true, true}
	personal = [2]bool{true, false}
)

// The digest's §10: the idle sweep archives whole idle conversations as
// auto-archived, sparing pinned ones and leaving archived ones as they
// are; new activity (an append, a continuation) takes back only the
// sweep's archive; a person's archive after the sweep makes it theirs.
func testAutoArchive_SweepAndReactivation(t *testing.T, e Engine) {
	s := bulkStore(t, e, []bulkSpec{
		{id: "idle", messages: 1, ago: 40 * day},
		{id: "chain", messages: 1},
		{id: "chain-2", parent: "chain", kind: ChildCompression, messages: 1},
		{id: "kept", messages: 1, archived: true, ago: 40 * day},
		{id: "pinned", messages: 1, pinned: true, ago: 40 * day},
		{id: "fresh", messages: 1},
		{id: "other", messages: 1, ago: 40 * day},
	})
	ctx := t.Context()
	backdate(t, e, s, "chain", 50*day)
	backdate(t, e, s, "chain-2", 40*day)
	res := runBulkBothWays(t, s, func(o BulkOptions) (BulkResult, error) {
		return s.AutoArchiveSessions(ctx, BulkFilter{OlderThan: 30 * day}, o)
	})
	if diff := cmp.Diff([]string{"chain", "chain-2", "idle", "other"}, res.IDs); diff != "" {
		t.Errorf("swept (-want +got):\n%s", diff)
	}
	if !cmp.Equal(res.Spared, []Spared{{ID: "pinned", Reason: SparePinned}}) || res.Already != 1 {
		t.Errorf("spared %v, already %d; want the pinned one spared and the archived one already", res.Spared, res.Already)
	}
	want := map[string][2]bool{"idle": swept, "chain": swept, "chain-2": swept, "kept": personal,
		"pinned": live, "fresh": live, "other": swept}
	if diff := cmp.Diff(want, archiveFlags(t, s, "idle", "chain", "chain-2", "kept", "pinned", "fresh", "other")); diff != "" {
		t.Errorf("after the sweep, [archived auto] (-want +got):\n%s", diff)
	}
	if v, err := s.Meta(ctx, "last_auto_archive"); err != nil || v == "" {
		t.Errorf("meta last_auto_archive = %q, %v; want the sweep's time", v, err)
	}

	// Pinned chats survive page limits too: first on a one-row page.
	page, err := s.RecentSessions(ctx, RecentQuery{PinnedFirst: true, Limit: 1})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "pinned" {
		t.Errorf("pinned-first page of one = %v, %v; want [pinned]", page.Sessions, err)
	}
	// A listing of live conversations leaves the swept ones out; their
	// summaries say whose archive it is.
	no, yes := false, true
	if got := RecentIDs(t, s, RecentQuery{Conversations: true, Archived: &no}); !cmp.Equal(got, []string{"fresh", "pinned"}) {
		t.Errorf("live conversations after the sweep: %v, want [fresh pinned]", got)
	}
	for sum, err := range s.AllRecentSessions(ctx, RecentQuery{Archived: &yes}) {
		if err != nil {
			t.Fatal(err)
		}
		if sum.AutoArchived != (sum.ID != "kept") {
			t.Errorf("summary of %s: AutoArchived %v", sum.ID, sum.AutoArchived)
		}
	}

	// New activity takes the sweep's archive back, never a person's.
	AppendTexts(t, s, "idle", "back again")
	AppendTexts(t, s, "kept", "still archived")
	// A continuation is new activity for the whole conversation.
	continueAs(t, s, "chain-2", "chain-3")
	// A person's archive after the sweep makes the archive theirs.
	if _, err := s.SetArchived(ctx, "other", true); err != nil {
		t.Fatal(err)
	}
	AppendTexts(t, s, "other", "not taken back")
	want = map[string][2]bool{"idle": live, "kept": personal, "chain": live, "chain-2": live, "chain-3": live, "other": personal}
	if diff := cmp.Diff(want, archiveFlags(t, s, "idle", "kept", "chain", "chain-2", "chain-3", "other")); diff != "" {
		t.Errorf("after new activity, [archived auto] (-want +got):\n%s", diff)
	}
	// A bulk archive is a person's too; unarchiving clears both flags.
	backdate(t, e, s, "idle", 40*day)
	if _, err := s.AutoArchiveSessions(ctx, BulkFilter{IDs: []string{"idle"}, OlderThan: 30 * day}, BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.ArchiveSessions(ctx, BulkFilter{IDs: []string{"idle"}}, BulkOptions{}); err != nil || !cmp.Equal(r.IDs, []string{"idle"}) {
		t.Errorf("bulk archive of a swept chat = %v, %v; want it made a person's", r.IDs, err)
	}
	if got := archiveFlags(t, s, "idle")["idle"]; got != personal {
		t.Errorf("after a bulk archive of a swept chat: %v, want %v", got, personal)
	}
	if _, err := s.SetArchived(ctx, "idle", false); err != nil {
		t.Fatal(err)
	}
	if got := archiveFlags(t, s, "idle")["idle"]; got != live {
		t.Errorf("after unarchiving: %v, want %v", got, live)
	}
}

// The sweep refuses input that selects nothing sensible, with a typed error,
// and changes nothing.
func testAutoArchive_Refusals(t *testing.T, e Engine) {
	s := bulkStore(t, e, []bulkSpec{{id: "idle", messages: 1, ago: 40 * day}})
	ctx := t.Context()
	for name, call := range map[string]func() (BulkResult, error){
		"NoIdleTime": func() (BulkResult, error) { return s.AutoArchiveSessions(ctx, BulkFilter{}, BulkOptions{}) },
		"NegativeIdle": func() (BulkResult, error) {
			return s.AutoArchiveSessions(ctx, BulkFilter{OlderThan: -time.Hour}, BulkOptions{})
		},
		"NegativeBatch": func() (BulkResult, error) {
			return s.AutoArchiveSessions(ctx, BulkFilter{OlderThan: day}, BulkOptions{BatchSize: -1})
		},
		"BadID": func() (BulkResult, error) {
			return s.AutoArchiveSessions(ctx, BulkFilter{OlderThan: day, IDs: []string{""}}, BulkOptions{})
		},
	} {
		t.Run(name, func(t *testing.T) {
			if res, err := call(); !errors.Is(err, ErrInvalidInput) || res.Done() != 0 {
				t.Errorf("= %d done, %v; want ErrInvalidInput and nothing done", res.Done(), err)
			}
		})
	}
	if got := archiveFlags(t, s, "idle")["idle"]; got != live {
		t.Errorf("after the refusals: %v, want %v", got, live)
	}
}
